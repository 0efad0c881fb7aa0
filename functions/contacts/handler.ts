import { createApiHandler } from "../../lib/http/api-handler.js";
import { contactRoutes } from "../../lib/routes/contacts.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import { createContact, getContact, listContacts, updateContact } from "../../lib/domain/records/contacts.js";
import type { ContactWriteBody } from "../../lib/schemas/contacts.js";

type ListQuery = { page?: string; limit?: string; q?: string; account_record_id?: string };
type ContactParams = { contact_id: string };

/** Endpoint group `contacts` (spec part 1, section 4.3). */
export const handler = createApiHandler(contactRoutes, {
  listContacts: async (req: ApiRequest<{}, ListQuery>) =>
    ok(
      await listContacts(req.principal, req.path, normalizePage(req.query), {
        q: req.query.q,
        accountRecordId: req.query.account_record_id,
      }),
    ),
  getContact: async (req: ApiRequest<ContactParams>) => ok(await getContact(req.principal, req.params.contact_id)),
  createContact: async (req: ApiRequest<{}, {}, ContactWriteBody & { first_name: string }>) =>
    created(await createContact(req.principal, req.body, req.completion(201))),
  updateContact: async (req: ApiRequest<ContactParams, {}, ContactWriteBody>) =>
    ok(await updateContact(req.principal, req.params.contact_id, req.body, req.completion(200))),
});
