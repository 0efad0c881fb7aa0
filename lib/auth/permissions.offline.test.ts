import { describe, expect, it } from "vitest";
import { type AccessHolder, accessLost, accessText, hasPermission, holdsAccess, locationRestriction, reachesLocation, usedAccessText } from "./permissions.js";

const staff = (permissions: string[], location: string | null = null): AccessHolder =>
  ({ role: "staff", permissions: new Set(permissions), assignedLocationId: location, accessUsed: new Set() }) as AccessHolder;

describe("the access an idempotent outcome depended on", () => {
  it("names only the consulted permissions the user held, and the location only when the rule was consulted", () => {
    const user = staff(["costs.view", "invoices.modify", "tasks.assign"], "loc-a");
    expect(usedAccessText(user)).toBe("|");
    hasPermission(user, "invoices.modify");
    hasPermission(user, "prices.modify"); // consulted, not held: nothing to keep
    expect(usedAccessText(user)).toBe("|invoices.modify");
    locationRestriction(user);
    expect(usedAccessText(user)).toBe("loc-a|invoices.modify");
    // A sync cursor is bound to everything the user holds, consulted or not.
    expect(accessText(user).split("|")[1]?.split(",").sort()).toEqual(["costs.view", "invoices.modify", "tasks.assign"]);
  });

  it("records nothing for a caller built without a record of use: its whole access counts", () => {
    const bare = { role: "staff", permissions: new Set(["costs.view"]), assignedLocationId: null } as AccessHolder;
    expect(usedAccessText(bare)).toBe(accessText(bare));
    expect(accessText(bare)).toBe("*|costs.view");
  });

  it("holds an outcome's access while every listed permission is held and the location is no narrower", () => {
    expect(holdsAccess(staff(["invoices.modify"]), "|invoices.modify")).toBe(true);
    expect(holdsAccess(staff([]), "|invoices.modify")).toBe(false);
    expect(holdsAccess(staff([], "loc-b"), "|")).toBe(true); // the request never looked at locations
    expect(holdsAccess(staff([], "loc-b"), "*|")).toBe(false);
    expect(holdsAccess(staff([], "loc-a"), "loc-a|")).toBe(true);
    expect(holdsAccess(staff([]), "loc-a|")).toBe(true); // unrestricted since: sees more, not less
    expect(holdsAccess({ role: "owner", permissions: new Set(), assignedLocationId: null }, "*|costs.view")).toBe(true);
  });

  it("names the locations a request acted at: a replay needs each of them, not an unrestricted user", () => {
    const user = staff([]);
    expect(reachesLocation(user, "loc-b")).toBe(true);
    reachesLocation(user, "loc-a");
    const text = usedAccessText(user);
    expect(text).toBe("||loc-a,loc-b");
    expect(holdsAccess(staff([]), text)).toBe(true);
    expect(holdsAccess(staff([], "loc-a"), text)).toBe(false); // loc-b is out of reach now
    expect(holdsAccess(staff([], "loc-a"), "||loc-a")).toBe(true);
    expect(reachesLocation(staff([], "loc-a"), "loc-b")).toBe(false);
  });

  it("tells a record out of sight (a location out of reach, records.view_all gone) from other lost access", () => {
    expect(accessLost(staff(["invoices.modify"]), "|invoices.modify")).toBeNull();
    expect(accessLost(staff([], "loc-a"), "||loc-a,loc-b")).toBe("visibility");
    expect(accessLost(staff(["invoices.modify"]), "|invoices.modify,records.view_all")).toBe("visibility");
    expect(accessLost(staff(["records.view_all"]), "|costs.view,records.view_all")).toBe("access");
    expect(accessLost(staff([], "loc-b"), "*|")).toBe("access"); // an answer over every location it saw
    expect(accessLost(staff([]), "|costs.view")).toBe("access");
  });

  it("checking a replay's access records nothing of its own", () => {
    const user = staff(["costs.view"]);
    holdsAccess(user, "*|costs.view");
    expect([...(user.accessUsed ?? [])]).toEqual([]);
  });
});
