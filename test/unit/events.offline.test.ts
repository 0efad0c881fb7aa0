import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../lib/routes/index.js";
import { sampleBody, sampleEvent } from "../../scripts/events.js";

describe("events/", () => {
  it.each(ROUTES.map((route) => [route.operationId, route] as const))("holds the current sample event of %s", (name, route) => {
    const stored = JSON.parse(readFileSync(`events/${name}.json`, "utf8"));
    expect(stored).toEqual(sampleEvent(route));
  });

  it.each(ROUTES.filter((route) => route.request.body).map((route) => [route.operationId, route] as const))(
    "has a sample body of %s that passes its schema",
    (_name, route) => {
      expect(route.request.body!.safeParse(sampleBody(route.operationId)).success).toBe(true);
    },
  );
});
