import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useApiServer, type ApiClient } from "../support/api.js";
import { idempotencyKey, newAccount, newKey, newUser, type TestAccount } from "../support/fixtures.js";
import { expectError, expectValidation } from "../support/assertions.js";

/**
 * Contacts (spec part 1, sections 2.1, 2.5, 4.3, 7 and 8; architecture section 4:
 * `records.view_all` and `accounts.manage`). Every test makes its own account; customers,
 * prospects and suppliers are created through the API (owned by the key's user), and
 * everything runs against DynamoDB Local through the real handlers.
 */
const api = useApiServer();

type Kind = "customer" | "prospect" | "supplier";
const PARTY_PATHS: Record<Kind, string> = { customer: "/customers", prospect: "/prospects", supplier: "/suppliers" };

const CONTACT_KEYS = [
  "id",
  "object",
  "first_name",
  "last_name",
  "job_title",
  "phone",
  "cell",
  "fax",
  "email_1",
  "email_2",
  "auto_add_email",
  "account_records",
  "created_at",
  "updated_at",
];
const NULLABLE = ["last_name", "job_title", "phone", "cell", "fax", "email_1", "email_2"];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

interface Contact {
  id: string;
  object: "contact";
  first_name: string;
  last_name: string | null;
  job_title: string | null;
  phone: string | null;
  cell: string | null;
  fax: string | null;
  email_1: string | null;
  email_2: string | null;
  auto_add_email: boolean;
  account_records: { id: string; object: Kind; name: string }[];
  created_at: string | null;
  updated_at: string | null;
}

interface Party {
  id: string;
  object: Kind;
  name: string;
}

async function setup(): Promise<{ account: TestAccount; owner: ApiClient }> {
  const account = await newAccount();
  return { account, owner: api().withKey(account.ownerKey) };
}

async function createParty(client: ApiClient, kind: Kind, name: string): Promise<Party> {
  const response = await client.post(PARTY_PATHS[kind], { name });
  expect(response.status, response.text).toBe(201);
  return response.body as Party;
}

async function createContact(client: ApiClient, body: Record<string, unknown>): Promise<Contact> {
  const response = await client.post("/contacts", body);
  expect(response.status, response.text).toBe(201);
  return response.body as Contact;
}

async function getContact(client: ApiClient, id: string): Promise<Contact> {
  const response = await client.get(`/contacts/${id}`);
  expect(response.status, response.text).toBe(200);
  return response.body as Contact;
}

async function patchContact(client: ApiClient, id: string, body: Record<string, unknown>): Promise<Contact> {
  const response = await client.patch(`/contacts/${id}`, body);
  expect(response.status, response.text).toBe(200);
  return response.body as Contact;
}

async function list(client: ApiClient, query: Record<string, string | number> = {}) {
  const response = await client.get("/contacts", query);
  expect(response.status, response.text).toBe(200);
  return response.body as {
    object: "list";
    url: string;
    has_more: boolean;
    data: Contact[];
    pagination: { page: number; per_page: number; total_pages: number; total_records: number };
  };
}

const total = async (client: ApiClient, query: Record<string, string | number> = {}) => (await list(client, query)).pagination.total_records;
const ids = (contacts: { id: string }[]) => contacts.map((c) => c.id).sort();
const ref = (party: Party) => ({ id: party.id, object: party.object, name: party.name });

describe("contact shape (spec 2.5)", () => {
  it("POST returns 201 with exactly the contact keys in order, nulls for fields not given and auto_add_email false", async () => {
    const { owner } = await setup();
    const response = await owner.post("/contacts", { first_name: "Ada" });
    expect(response.status, response.text).toBe(201);
    const contact = response.body as Contact;
    expect(Object.keys(contact)).toEqual(CONTACT_KEYS);
    expect(contact.id).toMatch(UUID);
    expect(contact.object).toBe("contact");
    expect(contact.first_name).toBe("Ada");
    for (const field of NULLABLE) expect(contact[field as keyof Contact], field).toBeNull();
    expect(contact.auto_add_email).toBe(false);
    expect(contact.account_records).toEqual([]);
    expect(contact.created_at).toMatch(ISO);
    expect(contact.updated_at).toMatch(ISO);

    expect(await getContact(owner, contact.id)).toEqual(contact);
  });

  it("stores every field given and lists the linked records as {id, object, name}", async () => {
    const { owner } = await setup();
    const customer = await createParty(owner, "customer", "Acme Customer");
    const prospect = await createParty(owner, "prospect", "Beta Prospect");
    const supplier = await createParty(owner, "supplier", "Gamma Supplier");
    const body = {
      first_name: "Grace",
      last_name: "Hopper",
      job_title: "Admiral",
      phone: "+1 555 0100",
      cell: "+1 555 0101",
      fax: "+1 555 0102",
      email_1: "grace@example.com",
      email_2: "hopper@example.org",
      auto_add_email: true,
      account_record_ids: [customer.id, prospect.id, supplier.id],
    };
    const contact = await createContact(owner, body);
    expect(Object.keys(contact)).toEqual(CONTACT_KEYS);
    const { account_record_ids: _ids, ...fields } = body;
    expect(contact).toMatchObject(fields);
    expect(ids(contact.account_records)).toEqual(ids([customer, prospect, supplier]));
    expect(contact.account_records).toHaveLength(3);
    for (const record of contact.account_records) expect(Object.keys(record)).toEqual(["id", "object", "name"]);
    expect([...contact.account_records].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [ref(customer), ref(prospect), ref(supplier)].sort((a, b) => a.id.localeCompare(b.id)),
    );

    const fetched = await getContact(owner, contact.id);
    expect(fetched).toEqual(contact);
  });

  it("shows a linked record's current name after the record is renamed", async () => {
    const { owner } = await setup();
    const customer = await createParty(owner, "customer", "Old Name Ltd");
    const contact = await createContact(owner, { first_name: "Linus", account_record_ids: [customer.id] });
    expect(contact.account_records).toEqual([{ id: customer.id, object: "customer", name: "Old Name Ltd" }]);

    const renamed = await owner.patch(`/customers/${customer.id}`, { name: "New Name Ltd" });
    expect(renamed.status, renamed.text).toBe(200);

    expect((await getContact(owner, contact.id)).account_records).toEqual([{ id: customer.id, object: "customer", name: "New Name Ltd" }]);
    const listed = await list(owner);
    expect(listed.data.find((c) => c.id === contact.id)!.account_records).toEqual([{ id: customer.id, object: "customer", name: "New Name Ltd" }]);
  });
});

describe("POST /contacts validation (spec 4.3, 7)", () => {
  it("rejects bad fields with 422 validation_failed naming the field, and creates nothing", async () => {
    const { owner } = await setup();
    const customer = await createParty(owner, "customer", "Valid Customer");

    const missing = await owner.post("/contacts", { last_name: "NoFirst" });
    expectValidation(missing, "first_name", "required");
    expect(missing.body.error.param).toBe("first_name");

    const blank = await owner.post("/contacts", { first_name: "   " });
    expectValidation(blank, "first_name");
    expect(blank.body.error.param).toBe("first_name");

    const empty = await owner.post("/contacts", { first_name: "" });
    expectValidation(empty, "first_name");

    const longFirst = await owner.post("/contacts", { first_name: "x".repeat(256) });
    expectValidation(longFirst, "first_name");
    expect(longFirst.body.error.param).toBe("first_name");

    const longLast = await owner.post("/contacts", { first_name: "Ok", last_name: "y".repeat(256) });
    expectValidation(longLast, "last_name");
    expect(longLast.body.error.param).toBe("last_name");

    const badEmail = await owner.post("/contacts", { first_name: "Ok", email_1: "nope" });
    expectValidation(badEmail, "email_1", "invalid_email");
    expect(badEmail.body.error.param).toBe("email_1");

    const badEmail2 = await owner.post("/contacts", { first_name: "Ok", email_2: "also@nope" });
    expectValidation(badEmail2, "email_2");

    const duplicate = await owner.post("/contacts", { first_name: "Ok", account_record_ids: [customer.id, customer.id] });
    expectValidation(duplicate, "account_record_ids[1]");
    expect(duplicate.body.error.param).toBe("account_record_ids[1]");

    const nonUuid = await owner.post("/contacts", { first_name: "Ok", account_record_ids: [customer.id, "not-a-uuid"] });
    expectValidation(nonUuid, "account_record_ids[1]");

    // 255 characters are fine (boundary): created, then counted below.
    const boundary = await owner.post("/contacts", { first_name: "f".repeat(255), last_name: "l".repeat(255) });
    expect(boundary.status, boundary.text).toBe(201);

    const listed = await list(owner);
    expect(listed.pagination.total_records).toBe(1);
    expect(listed.data.map((c) => c.id)).toEqual([boundary.body.id]);
    expect(await total(owner, { account_record_id: customer.id })).toBe(0);
  });

  it("names of 255 multi-byte characters (emoji, accents, CJK) are stored, listed and searched whole on every by-name list, not a 500 on the index key", async () => {
    const { owner } = await setup();
    const emoji = "😀".repeat(255);
    for (const path of ["/customers", "/prospects", "/suppliers", "/items"]) {
      const created = await owner.post(path, { name: emoji });
      expect(created.status, `${path}: ${created.text}`).toBe(201);
      const renamed = await owner.patch(`${path}/${created.body.id}`, { name: `${"漢".repeat(254)}X` });
      expect(renamed.status, `${path}: ${renamed.text}`).toBe(200);
      const listed = (await owner.get(path)).body.data.map((record: { id: string }) => record.id);
      expect(listed, path).toContain(created.body.id);
      // Search reads the whole name: its end lies past what the name's index key keeps.
      for (const q of [`${"漢".repeat(254)}x`, "漢x"]) {
        const found = (await owner.get(path, { q })).body.data.map((record: { id: string }) => record.id);
        expect(found, `${path}?q=${q.slice(-3)}`).toEqual([created.body.id]);
      }
      expect((await owner.get(path, { q: "漢y" })).body.data, path).toEqual([]);
    }
    const location = await owner.post("/locations", { name: "😀".repeat(100), short_name: "😀".repeat(20) }, { idempotencyKey: idempotencyKey() });
    expect(location.status, location.text).toBe(201);
    for (const body of [
      { first_name: "é".repeat(255), last_name: "é".repeat(255) },
      { first_name: emoji, last_name: emoji },
      { first_name: "漢".repeat(200), last_name: "漢".repeat(200) },
    ]) {
      const created = await owner.post("/contacts", body);
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject(body);
    }
    const contacts = await list(owner);
    expect(contacts.pagination.total_records).toBe(3);
  });

  it("rejects unknown, cross-account and invisible record ids with 422 naming account_record_ids[i], and creates nothing", async () => {
    const { account, owner } = await setup();
    const other = await setup();
    const mine = await createParty(owner, "customer", "Mine");
    const theirs = await createParty(other.owner, "customer", "Theirs");
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const u1Customer = await createParty(u1, "customer", "U1 Customer");

    const unknown = await owner.post("/contacts", { first_name: "Ok", account_record_ids: [mine.id, randomUUID()] });
    expectValidation(unknown, "account_record_ids[1]");
    expect(unknown.body.error.param).toBe("account_record_ids[1]");

    const crossAccount = await owner.post("/contacts", { first_name: "Ok", account_record_ids: [theirs.id] });
    expectValidation(crossAccount, "account_record_ids[0]");
    expect(crossAccount.body.error.param).toBe("account_record_ids[0]");
    expect(crossAccount.text).not.toContain("Theirs");

    // U1 (no records.view_all) cannot see the owner's customer.
    const invisible = await u1.post("/contacts", { first_name: "Ok", account_record_ids: [u1Customer.id, mine.id] });
    expectValidation(invisible, "account_record_ids[1]");
    expect(invisible.body.error.param).toBe("account_record_ids[1]");

    expect(await total(owner)).toBe(0);
    expect(await total(other.owner)).toBe(0);
    expect(await total(owner, { account_record_id: mine.id })).toBe(0);
    expect(await total(owner, { account_record_id: u1Customer.id })).toBe(0);
    expect(await total(u1)).toBe(0);
  });
});

describe("GET /contacts/{contact_id}", () => {
  it("returns a visible contact; unknown, malformed and other-account ids are 404 resource_missing", async () => {
    const { owner } = await setup();
    const other = await setup();
    const contact = await createContact(owner, { first_name: "Mine" });
    const theirs = await createContact(other.owner, { first_name: "Theirs" });

    const found = await owner.get(`/contacts/${contact.id}`);
    expect(found.status, found.text).toBe(200);
    expect(found.body).toEqual(contact);

    expectError(await owner.get(`/contacts/${randomUUID()}`), 404, "resource_missing");
    expectError(await owner.get("/contacts/not-a-uuid"), 404, "resource_missing");
    const cross = await owner.get(`/contacts/${theirs.id}`);
    expectError(cross, 404, "resource_missing");
    expect(cross.text).not.toContain("Theirs");
  });
});

describe("PATCH /contacts/{contact_id}", () => {
  it("changes the fields sent, keeps the rest, clears with null and manages links", async () => {
    const { owner } = await setup();
    const a = await createParty(owner, "customer", "Alpha Co");
    const b = await createParty(owner, "supplier", "Bravo Supply");
    const created = await createContact(owner, {
      first_name: "Kim",
      last_name: "Lee",
      job_title: "Buyer",
      phone: "111",
      email_1: "kim@example.com",
      account_record_ids: [a.id],
    });
    await new Promise((resolve) => setTimeout(resolve, 5));

    const renamed = await patchContact(owner, created.id, { first_name: "Kimberly", job_title: "Head Buyer" });
    expect(Object.keys(renamed)).toEqual(CONTACT_KEYS);
    expect(renamed).toMatchObject({
      id: created.id,
      first_name: "Kimberly",
      last_name: "Lee",
      job_title: "Head Buyer",
      phone: "111",
      email_1: "kim@example.com",
      auto_add_email: false,
      created_at: created.created_at,
    });
    // Omitting account_record_ids keeps the links.
    expect(renamed.account_records).toEqual([ref(a)]);
    expect(renamed.updated_at).not.toBe(created.updated_at);
    expect(Date.parse(renamed.updated_at!)).toBeGreaterThan(Date.parse(created.updated_at!));
    expect(await getContact(owner, created.id)).toEqual(renamed);

    const cleared = await patchContact(owner, created.id, { last_name: null, auto_add_email: true });
    expect(cleared.last_name).toBeNull();
    expect(cleared.first_name).toBe("Kimberly");
    expect(cleared.auto_add_email).toBe(true);
    expect(cleared.account_records).toEqual([ref(a)]);
    expect((await getContact(owner, created.id)).last_name).toBeNull();

    // An array replaces the links.
    const replaced = await patchContact(owner, created.id, { account_record_ids: [b.id] });
    expect(replaced.account_records).toEqual([ref(b)]);
    expect((await getContact(owner, created.id)).account_records).toEqual([ref(b)]);
    expect(await total(owner, { account_record_id: a.id })).toBe(0);
    expect(ids((await list(owner, { account_record_id: b.id })).data)).toEqual([created.id]);

    const both = await patchContact(owner, created.id, { account_record_ids: [a.id, b.id] });
    expect(ids(both.account_records)).toEqual(ids([a, b]));

    // [] removes every link.
    const unlinked = await patchContact(owner, created.id, { account_record_ids: [] });
    expect(unlinked.account_records).toEqual([]);
    expect((await getContact(owner, created.id)).account_records).toEqual([]);
    expect(await total(owner, { account_record_id: a.id })).toBe(0);
    expect(await total(owner, { account_record_id: b.id })).toBe(0);
    expect(unlinked).toMatchObject({ first_name: "Kimberly", last_name: null, job_title: "Head Buyer", phone: "111" });
  });

  it("rejects invalid updates with 422 and leaves the contact unchanged; unknown ids are 404", async () => {
    const { owner } = await setup();
    const a = await createParty(owner, "customer", "Alpha Co");
    const contact = await createContact(owner, { first_name: "Sam", account_record_ids: [a.id] });

    expectValidation(await owner.patch(`/contacts/${contact.id}`, { first_name: "" }), "first_name");
    expectValidation(await owner.patch(`/contacts/${contact.id}`, { email_1: "nope" }), "email_1", "invalid_email");
    expectValidation(await owner.patch(`/contacts/${contact.id}`, { account_record_ids: [randomUUID()] }), "account_record_ids[0]");
    expectValidation(await owner.patch(`/contacts/${contact.id}`, { account_record_ids: [a.id, a.id] }), "account_record_ids[1]");
    expect(await getContact(owner, contact.id)).toEqual(contact);

    expectError(await owner.patch(`/contacts/${randomUUID()}`, { first_name: "X" }), 404, "resource_missing");
  });
});

describe("GET /contacts", () => {
  it("requires accounts.manage: a staff user without it gets 403 permission_denied", async () => {
    const { account } = await setup();
    const viewer = api().withKey((await newUser(account, { permissions: ["records.view_all"] })).key);
    expectError(await viewer.get("/contacts"), 403, "permission_denied");
  });

  it("pages with a default limit of 20 and the list envelope", async () => {
    const { owner } = await setup();
    const created = await Promise.all(Array.from({ length: 21 }, (_, i) => createContact(owner, { first_name: `Person ${String(i).padStart(2, "0")}` })));

    const first = await list(owner);
    expect(first.object).toBe("list");
    expect(first.url).toBe("/api/v3/contacts");
    expect(first.has_more).toBe(true);
    expect(first.data).toHaveLength(20);
    expect(first.pagination).toEqual({ page: 1, per_page: 20, total_pages: 2, total_records: 21 });
    for (const contact of first.data) expect(Object.keys(contact)).toEqual(CONTACT_KEYS);

    const second = await list(owner, { page: 2 });
    expect(second.has_more).toBe(false);
    expect(second.data).toHaveLength(1);
    expect(second.pagination).toEqual({ page: 2, per_page: 20, total_pages: 2, total_records: 21 });
    expect(ids([...first.data, ...second.data])).toEqual(ids(created));

    const small = await list(owner, { limit: 5, page: 5 });
    expect(small.data).toHaveLength(1);
    expect(small.has_more).toBe(false);
    expect(small.pagination).toEqual({ page: 5, per_page: 5, total_pages: 5, total_records: 21 });

    const middle = await list(owner, { limit: 5, page: 2 });
    expect(middle.data).toHaveLength(5);
    expect(middle.has_more).toBe(true);

    const past = await list(owner, { page: 9 });
    expect(past.data).toEqual([]);
    expect(past.has_more).toBe(false);
  });

  it("q searches first, last and full names, emails and phone numbers case-insensitively (digits only too)", async () => {
    const { owner } = await setup();
    const alice = await createContact(owner, { first_name: "Alice", last_name: "Zephyr", email_1: "alice@Example.com" });
    const bob = await createContact(owner, { first_name: "Bob", last_name: "Marley", phone: "(555) 123-4567" });
    const carol = await createContact(owner, { first_name: "Carol", email_2: "Carol.Second@Other.org", cell: "+44 20 7946 0958" });
    const dave = await createContact(owner, { first_name: "Dave", fax: "999-888" });

    const search = async (q: string) => ids((await list(owner, { q })).data);
    expect(await search("ALICE")).toEqual([alice.id]);
    expect(await search("zephyr")).toEqual([alice.id]);
    expect(await search("mArLeY")).toEqual([bob.id]);
    expect(await search("bob marley")).toEqual([bob.id]);
    expect(await search("Alice Zephyr")).toEqual([alice.id]);
    expect(await search("example.COM")).toEqual([alice.id]);
    expect(await search("carol.second@other")).toEqual([carol.id]);
    expect(await search("(555) 123")).toEqual([bob.id]);
    expect(await search("5551234")).toEqual([bob.id]);
    expect(await search("2079460958")).toEqual([carol.id]);
    expect(await search("999888")).toEqual([dave.id]);
    expect(await search("nobody-matches")).toEqual([]);

    const page = await list(owner, { q: "5551234" });
    expect(page.pagination).toEqual({ page: 1, per_page: 20, total_pages: 1, total_records: 1 });
    expect(page.has_more).toBe(false);
    expect(page.data[0]).toEqual(bob);
  });

  it("account_record_id narrows to one visible record's contacts; garbage or unknown ids are 422 invalid_query_parameter", async () => {
    const { owner } = await setup();
    const other = await setup();
    const a = await createParty(owner, "customer", "Alpha Co");
    const b = await createParty(owner, "prospect", "Bravo Prospect");
    const theirs = await createParty(other.owner, "customer", "Theirs");
    const one = await createContact(owner, { first_name: "One", account_record_ids: [a.id] });
    const two = await createContact(owner, { first_name: "Two", account_record_ids: [a.id, b.id] });
    await createContact(owner, { first_name: "Three", account_record_ids: [b.id] });
    await createContact(owner, { first_name: "Four" });

    const ofA = await list(owner, { account_record_id: a.id });
    expect(ids(ofA.data)).toEqual(ids([one, two]));
    expect(ofA.pagination.total_records).toBe(2);
    expect(ofA.has_more).toBe(false);
    expect(ofA.url).toBe("/api/v3/contacts");

    const ofAPaged = await list(owner, { account_record_id: a.id, limit: 1 });
    expect(ofAPaged.data).toHaveLength(1);
    expect(ofAPaged.has_more).toBe(true);
    expect(ofAPaged.pagination).toEqual({ page: 1, per_page: 1, total_pages: 2, total_records: 2 });

    expect(await total(owner, { account_record_id: b.id })).toBe(2);
    expect(await total(owner)).toBe(4);

    expectError(await owner.get("/contacts", { account_record_id: "garbage" }), 422, "invalid_query_parameter", "account_record_id");
    expectError(await owner.get("/contacts", { account_record_id: randomUUID() }), 422, "invalid_query_parameter", "account_record_id");
    expectError(await owner.get("/contacts", { account_record_id: theirs.id }), 422, "invalid_query_parameter", "account_record_id");
  });
});

describe("visibility (spec 4.3 rules; architecture section 4)", () => {
  it("a user who sees some of a contact's links and sends them back changes nothing: each hidden link keeps its place", async () => {
    const { account, owner } = await setup();
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const c1 = await createParty(u1, "customer", "Mine");
    const c0 = await createParty(owner, "customer", "Hidden first");
    const c2 = await createParty(owner, "customer", "Hidden last");
    const contact = await createContact(owner, { first_name: "Walter", account_record_ids: [c0.id, c1.id, c2.id] });
    const before = await getContact(owner, contact.id);
    const same = await u1.patch(`/contacts/${contact.id}`, { account_record_ids: [c1.id] });
    expect(same.status, same.text).toBe(200);
    expect(await getContact(owner, contact.id)).toEqual(before);
    const c3 = await createParty(u1, "customer", "Also mine");
    const swapped = await u1.patch(`/contacts/${contact.id}`, { account_record_ids: [c3.id, c1.id] });
    expect(swapped.status, swapped.text).toBe(200);
    expect(ids((await getContact(owner, contact.id)).account_records)).toEqual(ids([c0, c3, c2, c1]));
  });

  it("users without records.view_all see only contacts linked to records they own, and only those links", async () => {
    const { account, owner } = await setup();
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const v = api().withKey((await newUser(account, { permissions: ["accounts.manage", "records.view_all"] })).key);

    const c1 = await createParty(u1, "customer", "C1 (U1's)");
    const c0 = await createParty(owner, "customer", "C0 (owner's)");
    const x = await createContact(owner, { first_name: "Xavier", account_record_ids: [c0.id] });
    const y = await createContact(owner, { first_name: "Yolanda", account_record_ids: [c1.id, c0.id] });
    const z = await createContact(owner, { first_name: "Zed" });

    // U1 sees Y only, with C1 only.
    const u1List = await list(u1);
    expect(u1List.data.map((c) => c.id)).toEqual([y.id]);
    expect(u1List.pagination.total_records).toBe(1);
    expect(u1List.data[0]!.account_records).toEqual([ref(c1)]);
    expect((await getContact(u1, y.id)).account_records).toEqual([ref(c1)]);
    expectError(await u1.get(`/contacts/${x.id}`), 404, "resource_missing");
    expectError(await u1.get(`/contacts/${z.id}`), 404, "resource_missing");
    expect(ids((await list(u1, { account_record_id: c1.id })).data)).toEqual([y.id]);
    expectError(await u1.get("/contacts", { account_record_id: c0.id }), 422, "invalid_query_parameter", "account_record_id");
    expect(ids((await list(u1, { q: "o" })).data)).toEqual([y.id]);
    expect((await list(u1, { q: "xavier" })).pagination.total_records).toBe(0);

    // V (records.view_all) sees everything.
    const vList = await list(v);
    expect(ids(vList.data)).toEqual(ids([x, y, z]));
    expect(vList.pagination.total_records).toBe(3);
    expect(ids((await getContact(v, y.id)).account_records)).toEqual(ids([c1, c0]));
    expect((await getContact(v, x.id)).account_records).toEqual([ref(c0)]);
    expect((await getContact(v, z.id)).account_records).toEqual([]);

    // U1 cannot link C0, on create or update, nor patch contacts it cannot see.
    expectValidation(await u1.post("/contacts", { first_name: "Nope", account_record_ids: [c0.id] }), "account_record_ids[0]");
    expectValidation(await u1.patch(`/contacts/${y.id}`, { account_record_ids: [c1.id, c0.id] }), "account_record_ids[1]");
    expectError(await u1.patch(`/contacts/${x.id}`, { first_name: "Hijack" }), 404, "resource_missing");
    expect((await getContact(v, x.id)).first_name).toBe("Xavier");
    expect(await total(v)).toBe(3);

    // U1 removing "all" links keeps the hidden link to C0.
    const patched = await u1.patch(`/contacts/${y.id}`, { account_record_ids: [] });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.account_records).toEqual([]);
    expect((await getContact(v, y.id)).account_records).toEqual([ref(c0)]);
    expect(await total(v, { account_record_id: c0.id })).toBe(2);
    expect(await total(v, { account_record_id: c1.id })).toBe(0);

    const u1After = await list(u1);
    expect(u1After.data).toEqual([]);
    expect(u1After.pagination.total_records).toBe(0);
    expectError(await u1.get(`/contacts/${y.id}`), 404, "resource_missing");
  });
});

describe("deleting a linked record (DELETE /customers/{id})", () => {
  it("unlinks its only contact; the deleted id is no longer a filter; a contact visible only through it disappears", async () => {
    const { account, owner } = await setup();
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const c1 = await createParty(u1, "customer", "C1 to delete");
    const c2 = await createParty(u1, "customer", "C2 kept");
    const c0 = await createParty(owner, "customer", "C0 owner");
    const onlyC1 = await createContact(owner, { first_name: "Only", account_record_ids: [c1.id, c0.id] });
    const unrelated = await createContact(owner, { first_name: "Other", account_record_ids: [c2.id] });

    expect(ids((await list(u1)).data)).toEqual(ids([onlyC1, unrelated]));
    expect(await total(u1)).toBe(2);
    expect(await total(owner, { account_record_id: c1.id })).toBe(1);

    const deleted = await owner.request("DELETE", `/customers/${c1.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: c1.id, object: "customer", deleted: true });
    expectError(await owner.get(`/customers/${c1.id}`), 404, "resource_missing");

    expect((await getContact(owner, onlyC1.id)).account_records).toEqual([ref(c0)]);
    expect((await getContact(owner, unrelated.id)).account_records).toEqual([ref(c2)]);
    expectError(await owner.get("/contacts", { account_record_id: c1.id }), 422, "invalid_query_parameter", "account_record_id");

    // U1 saw "Only" only through C1.
    expectError(await u1.get(`/contacts/${onlyC1.id}`), 404, "resource_missing");
    const u1List = await list(u1);
    expect(ids(u1List.data)).toEqual([unrelated.id]);
    expect(u1List.pagination.total_records).toBe(1);

    expect(await total(owner)).toBe(2);
    expect(await total(owner, { account_record_id: c0.id })).toBe(1);
    expect(await total(owner, { account_record_id: c2.id })).toBe(1);

    // A deleted record cannot be linked any more.
    expectValidation(await owner.post("/contacts", { first_name: "Late", account_record_ids: [c1.id] }), "account_record_ids[0]");
    expect(await total(owner)).toBe(2);
  });

  it("unlinks every contact when several contacts link the deleted record (a write of each: updated_at moves)", async () => {
    const { account, owner } = await setup();
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const c1 = await createParty(u1, "customer", "C1 to delete");
    const c2 = await createParty(u1, "customer", "C2 kept");
    const c0 = await createParty(owner, "customer", "C0 owner");
    const onlyC1 = await createContact(owner, { first_name: "Only", account_record_ids: [c1.id, c0.id] });
    const c1AndC2 = await createContact(owner, { first_name: "Both", account_record_ids: [c1.id, c2.id] });
    const unrelated = await createContact(owner, { first_name: "Other", account_record_ids: [c2.id] });

    expect(ids((await list(u1)).data)).toEqual(ids([onlyC1, c1AndC2, unrelated]));
    expect(await total(u1)).toBe(3);
    expect(await total(owner, { account_record_id: c1.id })).toBe(2);

    const deleted = await owner.request("DELETE", `/customers/${c1.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ id: c1.id, object: "customer", deleted: true });
    expectError(await owner.get(`/customers/${c1.id}`), 404, "resource_missing");

    const onlyC1After = await getContact(owner, onlyC1.id);
    expect(onlyC1After.account_records).toEqual([ref(c0)]);
    expect(String(onlyC1After.updated_at) > String(onlyC1.updated_at), "an unlinked contact's updated_at moves").toBe(true);
    expect((await getContact(owner, c1AndC2.id)).account_records).toEqual([ref(c2)]);
    const unrelatedAfter = await getContact(owner, unrelated.id);
    expect(unrelatedAfter.account_records).toEqual([ref(c2)]);
    expect(unrelatedAfter.updated_at).toBe(unrelated.updated_at);
    expectError(await owner.get("/contacts", { account_record_id: c1.id }), 422, "invalid_query_parameter", "account_record_id");

    expectError(await u1.get(`/contacts/${onlyC1.id}`), 404, "resource_missing");
    const u1List = await list(u1);
    expect(ids(u1List.data)).toEqual(ids([c1AndC2, unrelated]));
    expect(u1List.pagination.total_records).toBe(2);
    expect((await getContact(u1, c1AndC2.id)).account_records).toEqual([ref(c2)]);

    expect(await total(owner)).toBe(3);
    expect(await total(owner, { account_record_id: c0.id })).toBe(1);
    expect(await total(owner, { account_record_id: c2.id })).toBe(2);
  });
});

describe("deleting a record with more linked contacts than one transaction holds", () => {
  it("unlinks all of them (the excess first, the rest with the delete) and keeps every count right", async () => {
    const { account, owner } = await setup();
    const u1 = api().withKey((await newUser(account, { permissions: ["accounts.manage"] })).key);
    const busy = await createParty(u1, "customer", "Busy customer");
    const other = await createParty(owner, "customer", "Other customer");
    const linked = [];
    for (let i = 0; i < 23; i++) {
      linked.push(
        await createContact(owner, { first_name: `Linked ${String(i).padStart(2, "0")}`, account_record_ids: i % 2 ? [busy.id, other.id] : [busy.id] }),
      );
    }
    expect(await total(u1)).toBe(23);
    expect(await total(owner, { account_record_id: busy.id })).toBe(23);

    const deleted = await owner.request("DELETE", `/customers/${busy.id}`);
    expect(deleted.status, deleted.text).toBe(200);

    expect(await total(u1)).toBe(0);
    expect((await list(u1)).data).toEqual([]);
    expect(await total(owner)).toBe(23);
    expect(await total(owner, { account_record_id: other.id })).toBe(11);
    for (const contact of linked) {
      const records = (await getContact(owner, contact.id)).account_records;
      expect(records.map((r: { id: string }) => r.id)).not.toContain(busy.id);
    }
  });
});

describe("scopes and idempotency", () => {
  it("a key with contacts:read only gets 403 insufficient_scope on POST, but can read", async () => {
    const { account, owner } = await setup();
    await createContact(owner, { first_name: "Readable" });
    const readOnly = api().withKey((await newKey(account.ownerUserId, { scopes: ["contacts:read"] })).key);

    expectError(await readOnly.post("/contacts", { first_name: "Denied" }), 403, "insufficient_scope", "contacts:write");
    expect(await total(readOnly)).toBe(1);
    expect(await total(owner)).toBe(1);
  });

  it("an exact POST replay with the same Idempotency-Key returns the same contact and creates one", async () => {
    const { owner } = await setup();
    const customer = await createParty(owner, "customer", "Idem Co");
    const key = idempotencyKey();
    const body = { first_name: "Once", email_1: "once@example.com", account_record_ids: [customer.id] };

    const first = await owner.post("/contacts", body, { idempotencyKey: key });
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get("idempotent-replayed")).not.toBe("true");

    const replay = await owner.post("/contacts", body, { idempotencyKey: key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body).toEqual(first.body);

    const listed = await list(owner);
    expect(listed.pagination.total_records).toBe(1);
    expect(listed.data.map((c) => c.id)).toEqual([first.body.id]);
    expect(await total(owner, { account_record_id: customer.id })).toBe(1);

    // The same key with different data is 409 idempotency_key_reused.
    const reused = await owner.post("/contacts", { ...body, first_name: "Twice" }, { idempotencyKey: key });
    expectError(reused, 409, "idempotency_key_reused", "Idempotency-Key");
    expect(await total(owner)).toBe(1);
  });
});
