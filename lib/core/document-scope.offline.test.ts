import { NO_LOCATION, SEVERAL_LOCATIONS, locationScopeOf, numberKeyOf } from "./document-scope.js";
import { describe, expect, it } from "vitest";

describe("offline: document scope", () => {
  it("is the one location header and lines name, none or several", () => {
    expect(locationScopeOf({})).toBe(NO_LOCATION);
    expect(locationScopeOf({ locationId: "a" }, [{ locationId: "a" }])).toBe("a");
    expect(locationScopeOf({ originLocationId: "a", destinationLocationId: "b" })).toBe(SEVERAL_LOCATIONS);
    expect(locationScopeOf({ locationId: "a" }, [{ locationId: "b" }])).toBe(SEVERAL_LOCATIONS);
  });

  it("keeps the stored scope when no lines are given", () => {
    expect(locationScopeOf({ locationId: "a", locationScope: "b" })).toBe("b");
    expect(locationScopeOf({ locationId: "a", locationScope: "b" }, [])).toBe("a");
  });

  it("pads numbers to sort as text", () => {
    expect(numberKeyOf(42)).toBe("0000000042");
  });
});
