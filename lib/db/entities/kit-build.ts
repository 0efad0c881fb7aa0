import { Entity } from "electrodb";

/**
 * One build of a kit (an assembly) at one location, from assembly until disassembly deletes it.
 * Stored in its kit's partition (the path's kit and account are part of the key, so a build
 * can only be found under its own kit). `number` comes from the account's `kit_build`
 * sequence in the build's own transaction: newest first is number descending (indexes gsi1,
 * all builds of the kit, and gsi2, the kit's builds at one location).
 *
 * `changes` are the build's OWN stock changes at its location, in the order applied (the
 * components consumed, then the assembled item added), with the unit cost of each: exactly
 * what a disassembly reverses. A nested automatic build (`parentKitId`) has its own record
 * and its own changes.
 */
export const kitBuildEntity = () =>
  new Entity({
    model: { entity: "kitbuild", version: "1", service: "inv" },
    attributes: {
      accountId: { type: "string", required: true, readOnly: true },
      kitId: { type: "string", required: true, readOnly: true },
      buildId: { type: "string", required: true, readOnly: true },
      number: { type: "number", required: true, readOnly: true, padding: { length: 12, char: "0" } },
      locationId: { type: "string", required: true, readOnly: true },
      quantity: { type: "number", required: true, readOnly: true },
      method: { type: ["manual", "automatic"] as const, required: true, readOnly: true },
      parentKitId: { type: "string", readOnly: true },
      parentKitNumber: { type: "number", readOnly: true },
      /** The build of the parent kit that needed this one. */
      parentBuildId: { type: "string", readOnly: true },
      userId: { type: "string", required: true, readOnly: true },
      userName: { type: "string", readOnly: true },
      /** Cost of one assembled unit: the components' costs x quantities (four-decimal string). */
      unitCost: { type: "string", required: true, readOnly: true },
      changes: {
        type: "list",
        required: true,
        readOnly: true,
        items: {
          type: "map",
          properties: {
            itemId: { type: "string", required: true },
            variationId: { type: "string", required: true },
            onHand: { type: "number", required: true },
            unitCost: { type: "string", required: true },
          },
        },
      },
      createdAt: { type: "string", required: true, readOnly: true },
    },
    indexes: {
      primary: {
        pk: { field: "pk", composite: ["accountId", "kitId"] },
        sk: { field: "sk", composite: ["buildId"] },
      },
      byNumber: {
        index: "gsi1",
        pk: { field: "gsi1pk", composite: ["accountId", "kitId"] },
        sk: { field: "gsi1sk", composite: ["number"] },
      },
      byLocation: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["accountId", "kitId", "locationId"] },
        sk: { field: "gsi2sk", composite: ["number"] },
      },
    },
  });
