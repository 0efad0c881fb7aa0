import { Entity } from "electrodb";

/**
 * The queue of writers of one contended record or sequence across processes (`lib/db/turns.ts`):
 * a ticket dispenser (`next`) and the ticket now served (`serving`). One
 * partition per queue, so its polls never share capacity with the record itself. Kept a day
 * after its last use (TTL).
 */
export const turnEntity = () =>
  new Entity({
    model: { entity: "turn", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      /** What the writers race for: `sequence:<account>:invoice`, `document:<account>:<id>`... */
      name: { type: "string", required: true, readOnly: true },
      /** Tickets handed out (the next one is `next`). */
      next: { type: "number" },
      /** The ticket whose holder may write now (absent: 0). */
      serving: { type: "number" },
      /**
       * What the last holder handed on with the turn (e.g. the sequence value it wrote), so the
       * next holder need not read it again; only a hint: the next write's conditions still decide.
       */
      handoff: { type: "any" },
      expiresAt: { type: "number", field: "expires_at" },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "name"] },
        sk: { field: "sk", composite: [] },
      },
    },
  });
