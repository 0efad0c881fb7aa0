import * as z from "zod";
import { type Infer, lazy } from "./lazy.js";
import { QUERY_UUID, documentedAs, listEnvelope, optionalText, pageQuery, requiredText, text, timestamp, uuid, blankAsNull } from "./common.js";

/** Contacts (spec part 1, sections 2.5 and 4.3). */
export const MAX_CONTACT_LINKS = 20;

const text255 = lazy(() => optionalText(255));
const email = lazy(() => blankAsNull(z.email().max(255)));

const contactFields = lazy(() => ({
  first_name: requiredText(255),
  last_name: text255(),
  job_title: text255(),
  phone: text255(),
  cell: text255(),
  fax: text255(),
  email_1: email(),
  email_2: email(),
  auto_add_email: z.boolean().optional(),
  account_record_ids: z.array(uuid()).max(MAX_CONTACT_LINKS).optional().meta({
    description:
      "Unique ids of visible customers, prospects or suppliers (a repeated id is 422 `duplicate`). Omitted keeps the links, an array replaces them, [] removes all.",
    uniqueItems: true,
  }),
}));

export const contactCreateBody = lazy(() => z.strictObject(contactFields()).meta({ id: "ContactCreate" }));
export const contactUpdateBody = lazy(() =>
  z.strictObject({ ...contactFields(), first_name: contactFields().first_name.optional() }).meta({ id: "ContactUpdate" }),
);

export type ContactWriteBody = Infer<typeof contactUpdateBody>;

export const contactResource = lazy(() =>
  z
    .object({
      id: uuid(),
      object: z.literal("contact"),
      first_name: z.string(),
      last_name: z.string().nullable(),
      job_title: z.string().nullable(),
      phone: z.string().nullable(),
      cell: z.string().nullable(),
      fax: z.string().nullable(),
      email_1: z.string().nullable(),
      email_2: z.string().nullable(),
      auto_add_email: z.boolean(),
      account_records: z.array(z.object({ id: uuid(), object: z.enum(["customer", "prospect", "supplier"]), name: z.string() })),
      created_at: timestamp().nullable(),
      updated_at: timestamp().nullable(),
    })
    .meta({ id: "Contact" }),
);

export const contactList = lazy(() => listEnvelope(contactResource(), "ContactList"));

export const contactListQuery = lazy(() =>
  pageQuery().extend({
    q: text(255).optional().meta({ description: "Searches names, emails and phone numbers (case-insensitive)." }),
    account_record_id: z
      .string()
      .optional()
      .meta({
        description: "Only contacts linked to this visible customer, prospect or supplier (else 422 invalid_query_parameter).",
        ...documentedAs({ schema: QUERY_UUID }),
      }),
  }),
);

export const contactPath = lazy(() => z.object({ contact_id: uuid() }));
