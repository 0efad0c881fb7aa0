import { describe, expect, it } from "vitest";
import { AdminError } from "../../core/failures.js";
import { operatorInputChecks, requireName } from "./checks.js";

describe("offline: operator input checks", () => {
  it("accepts valid input", () => {
    expect(() => operatorInputChecks.timeZone("Europe/Paris")).not.toThrow();
    expect(() => operatorInputChecks.currency("EUR")).not.toThrow();
    expect(() => operatorInputChecks.scopes(["all"])).not.toThrow();
    expect(() => operatorInputChecks.expiresAt("2030-01-01T00:00:00Z")).not.toThrow();
    expect(requireName("  Shelf  ")).toBe("Shelf");
  });

  it("refuses invalid input with AdminError", () => {
    expect(() => operatorInputChecks.timeZone("Mars/Base")).toThrow(AdminError);
    expect(() => operatorInputChecks.currency("euro")).toThrow(AdminError);
    expect(() => operatorInputChecks.permissions(["no.such"])).toThrow(AdminError);
    expect(() => operatorInputChecks.scopes([])).toThrow(AdminError);
    expect(() => operatorInputChecks.expiresAt("tomorrow")).toThrow(AdminError);
    expect(() => operatorInputChecks.item({ name: "Nut", price: "abc" })).toThrow(/^--price: /);
    expect(() => operatorInputChecks.item({ name: "Nut", price: "-5" })).toThrow(/^--price: /);
    expect(() => operatorInputChecks.item({ name: "Nut", sku: "S".repeat(300) })).toThrow(/^--sku: /);
    expect(() => operatorInputChecks.customFieldKind("planet")).toThrow(AdminError);
    expect(() => operatorInputChecks.name(" ")).toThrow(AdminError);
    expect(() => operatorInputChecks.name("x".repeat(256))).toThrow(AdminError);
  });
});
