import { errors, type ApiError } from "../core/errors.js";
import { parseIfMatch } from "../domain/common/revisions.js";
import type { RouteDefinition } from "../routes/define.js";

/**
 * "What you read you can write back" (architecture section 8): the body of a GET, with the
 * read-only fields removed, is accepted by the resource's PATCH (or PUT) and changes nothing.
 * A client rarely knows which of the fields it read are the service's own (a customer's name
 * on a document, a line's SKU or position, an estimate's `can_edit`), so a field the update does
 * not take is accepted when it repeats what the record shows now, and dropped before
 * validation. The same field with another value is refused as before (422 `unknown_field`, or
 * the route's own code such as `unsupported_invoice_field`): writing it would change something
 * the service controls.
 */

/**
 * A write-back from a copy older than the record: the body repeats fields the record shows but
 * the update does not take (`paths`), and its `version` (a task's) or the revision it names
 * (`If-Match`, or the `revision` it sends back) is no longer the record's. The answer is the
 * route's concurrency conflict (409 `task_conflict` or `mobile_mutation_conflict`), as the update
 * itself would give, rather than 422 on a read-only field whose value moved on with the record.
 * A field the record does not show at all is not a copy of it: still 422.
 */
export function staleCopyConflict(
  route: RouteDefinition,
  ifMatchHeader: string | undefined,
  body: unknown,
  current: unknown,
  paths: readonly string[],
): ApiError | undefined {
  if (!isObject(body) || !isObject(current)) return undefined;
  if (!paths.some((path) => Object.hasOwn(current, /^\w+/.exec(path)?.[0] ?? ""))) return undefined;
  if (route.errors?.[409]?.includes("task_conflict") && typeof current.version === "number") {
    return typeof body.version === "number" && body.version !== current.version ? errors.taskConflict(current.version) : undefined;
  }
  if (!route.ifMatch || typeof current.revision !== "string") return undefined;
  const named = parseIfMatch(ifMatchHeader);
  // Where If-Match is required, its absence is the route's own answer (428), whatever the body holds.
  if (route.ifMatch === "required" && named === undefined) return undefined;
  if (named !== undefined && !named.includes(current.revision)) return errors.mobileMutationConflict();
  return typeof body.revision === "string" && body.revision !== current.revision ? errors.mobileMutationConflict("revision") : undefined;
}

/** Generated lines (a document-wide discount's line) the update does not take back: the discount settles them. */
const GENERATED_LINE_TYPES = new Set(["discount"]);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** Deep equality of two JSON values (object keys in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, index) => sameJson(value, b[index]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}

/** `lines[3].sku` -> { list: "lines", index: 3, field: "sku" }; `record.name` -> { object: "record", field: "name" }; `name` -> { field: "name" }. */
function parsePath(path: string): { list?: string; index?: number; object?: string; field: string } | undefined {
  const nested = /^(\w+)\[(\d+)\]\.(\w+)$/.exec(path);
  if (nested) return { list: nested[1]!, index: Number(nested[2]), field: nested[3]! };
  const member = /^(\w+)\.(\w+)$/.exec(path);
  if (member) return { object: member[1]!, field: member[2]! };
  return /^\w+$/.test(path) ? { field: path } : undefined;
}

/**
 * `body` without the fields at `paths` (fields the update does not take: `name`, `record.name`
 * or `lines[3].sku`) whose value repeats `current` (the record as its GET shows it), and without
 * generated lines sent back unchanged. Fields of a new line (no `id`) or with another value are
 * kept, for validation to refuse. Returns `body` itself when nothing is dropped.
 */
export function withoutRepeatedFields(body: unknown, current: unknown, paths: readonly string[]): unknown {
  if (!isObject(body) || !isObject(current) || paths.length === 0) return body;
  const top = new Set<string>();
  const members = new Map<string, Set<string>>();
  // Per list, per body index: the entry the record shows with the same `id`, and its repeated fields.
  const nested = new Map<string, Map<number, { shown: Json; fields: Set<string> }>>();
  // The record's entries of each list by id, indexed once (a 500-line document has many paths).
  const shownById = new Map<string, Map<unknown, Json>>();
  const shownEntryOf = (list: string, entry: unknown): Json | undefined => {
    if (!isObject(entry) || typeof entry.id !== "string") return undefined;
    let byId = shownById.get(list);
    if (!byId) {
      const entries = Array.isArray(current[list]) ? (current[list] as unknown[]).filter(isObject) : [];
      byId = new Map(entries.map((candidate) => [candidate.id, candidate]));
      shownById.set(list, byId);
    }
    return byId.get(entry.id);
  };
  for (const path of paths) {
    const parsed = parsePath(path);
    if (!parsed) continue;
    if (parsed.object !== undefined) {
      // A field of an object the record shows (a task's `record.name`): by the same object.
      const sent = body[parsed.object];
      const shown = current[parsed.object];
      if (
        isObject(sent) &&
        isObject(shown) &&
        Object.hasOwn(sent, parsed.field) &&
        Object.hasOwn(shown, parsed.field) &&
        sameJson(sent[parsed.field], shown[parsed.field])
      ) {
        members.set(parsed.object, (members.get(parsed.object) ?? new Set()).add(parsed.field));
      }
      continue;
    }
    if (parsed.list === undefined) {
      if (Object.hasOwn(body, parsed.field) && Object.hasOwn(current, parsed.field) && sameJson(body[parsed.field], current[parsed.field]))
        top.add(parsed.field);
      continue;
    }
    const entry = Array.isArray(body[parsed.list]) ? (body[parsed.list] as unknown[])[parsed.index!] : undefined;
    const shown = shownEntryOf(parsed.list, entry);
    if (!shown || !isObject(entry) || !Object.hasOwn(shown, parsed.field) || !sameJson(entry[parsed.field], shown[parsed.field])) continue;
    const byIndex = nested.get(parsed.list) ?? new Map<number, { shown: Json; fields: Set<string> }>();
    const dropped = byIndex.get(parsed.index!) ?? { shown, fields: new Set<string>() };
    dropped.fields.add(parsed.field);
    nested.set(parsed.list, byIndex.set(parsed.index!, dropped));
  }
  if (top.size === 0 && members.size === 0 && nested.size === 0) return body;
  const result: Json = {};
  for (const [key, value] of Object.entries(body)) {
    if (top.has(key)) continue;
    const dropMembers = members.get(key);
    if (dropMembers && isObject(value)) {
      const kept = Object.entries(value).filter(([field]) => !dropMembers.has(field));
      // Every member repeated what the record shows (a task's `record: {available: false}`):
      // the object is the record's own, as if left out.
      if (kept.length > 0) result[key] = Object.fromEntries(kept);
      continue;
    }
    const drop = nested.get(key);
    if (!drop || !Array.isArray(value)) {
      result[key] = value;
      continue;
    }
    result[key] = value.flatMap((entry, index) => {
      const dropped = drop.get(index);
      if (!dropped || !isObject(entry)) return [entry];
      const { shown, fields } = dropped;
      // A generated line sent back exactly as shown is the service's own: leave it to the service.
      if (
        typeof shown.line_type === "string" &&
        GENERATED_LINE_TYPES.has(shown.line_type) &&
        Object.keys(entry).every((field) => sameJson(entry[field], shown[field]))
      ) {
        return [];
      }
      return [Object.fromEntries(Object.entries(entry).filter(([field]) => !fields.has(field)))];
    });
  }
  return result;
}
