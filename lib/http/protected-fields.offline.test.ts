import { describe, expect, it } from "vitest";
import { errors } from "../core/errors.js";
import { protectedFieldsIn } from "./middlewares/validate-request.js";

describe("offline: protected fields of a route", () => {
  const fields = ["status_id", "total", "lines[].subtotal", "lines[].unit_cost"];

  it("finds top-level and per-element fields in body order, JSON paths included", () => {
    const body = { total: 1, name: "x", lines: [{ name: "a" }, { unit_cost: 1, subtotal: 2 }, "junk", null], status_id: 5 };
    expect(protectedFieldsIn(body, fields)).toEqual(["total", "lines[1].unit_cost", "lines[1].subtotal", "status_id"]);
    expect(protectedFieldsIn({ name: "x", lines: "not a list" }, fields)).toEqual([]);
    expect(protectedFieldsIn(["status_id"], fields)).toEqual([]);
    expect(protectedFieldsIn(null, fields)).toEqual([]);
    expect(protectedFieldsIn(JSON.parse('{"__proto__": {"status_id": 1}}'), fields)).toEqual([]);
  });

  it("answers 422 with the route's code, naming the first field and listing all", () => {
    const error = errors.unsupportedField("unsupported_estimate_field", ["total", "lines[1].unit_cost"]);
    expect(error.statusCode).toBe(422);
    expect(error.toBody()).toEqual({
      error: {
        type: "invalid_request_error",
        code: "unsupported_estimate_field",
        message: "total is set by the service and cannot be supplied (nor lines[1].unit_cost).",
        param: "total",
        details: [
          { param: "total", code: "unsupported_estimate_field", message: "is set by the service and cannot be supplied." },
          { param: "lines[1].unit_cost", code: "unsupported_estimate_field", message: "is set by the service and cannot be supplied." },
        ],
      },
    });
  });
});
