import { describe, expect, it } from "vitest";
import { REFERENCE_CSP } from "../../lib/openapi/reference.js";
import { useApiServer } from "../support/api.js";
import { newAccount } from "../support/fixtures.js";

/**
 * The platform group: the API index, the OpenAPI document, the HTML reference and its script
 * (all public), and API Gateway's `$default` route: 404 `route_not_found` for unknown paths,
 * 404 `route_not_found` with `Allow` for known paths with another method (architecture
 * section 4: an unknown route, method and path, is 404).
 */
const api = useApiServer();

describe("GET /api/v3", () => {
  it("is public and links the OpenAPI document and the HTML reference", async () => {
    const response = await api().get("");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ object: "api", version: "v3", links: { openapi: "/api/v3/openapi.json", docs: "/api/v3/docs" } });
    expect(Object.keys(response.body)).toEqual(["object", "version", "links"]);
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(response.headers.get("ratelimit-limit")).toMatch(/^\d+$/);
    // The links work.
    expect((await fetch(new URL(response.body.links.openapi, api().baseUrl))).status).toBe(200);
    expect((await fetch(new URL(response.body.links.docs, api().baseUrl))).status).toBe(200);
  });
});

describe("GET /api/v3/docs and its script", () => {
  it("serves an HTML page that loads only this API's own resources, under a strict Content-Security-Policy", async () => {
    const response = await fetch(`${api().baseUrl}/api/v3/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toBe(REFERENCE_CSP);
    expect(REFERENCE_CSP).toContain("default-src 'none'");
    expect(REFERENCE_CSP).toContain("script-src 'self'");
    expect(REFERENCE_CSP).not.toMatch(/script-src[^;]*unsafe/);
    expect(REFERENCE_CSP).not.toMatch(/https?:|\*/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await response.text();
    expect(html).toContain('<redoc spec-url="openapi.json"');
    expect(html).toContain('<script src="docs/redoc.standalone.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script>[^<]/); // no inline script
  });

  it("serves the renderer from the API itself, with no reference to Redocly's CDN", async () => {
    const response = await fetch(`${api().baseUrl}/api/v3/docs/redoc.standalone.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const script = await response.text();
    expect(script.length).toBeGreaterThan(500_000);
    expect(script).not.toContain("cdn.redoc.ly");
  });
});

describe("$default: requests that match no route", () => {
  it("a known path with another method is an unknown route: 404 route_not_found with Allow, in the error shape", async () => {
    const account = await newAccount();
    const client = api().withKey(account.ownerKey);
    const response = await client.request("DELETE", "/locations");
    expect(response.status).toBe(404);
    expect(response.headers.get("allow")).toBe("GET, POST");
    expect(response.body).toEqual({
      error: { type: "invalid_request_error", code: "route_not_found", message: "Unrecognized request: DELETE /api/v3/locations; this path takes GET, POST." },
    });
    expect(response.headers.get("x-request-id")).toBeTruthy();
    expect(response.headers.get("ratelimit-reset")).toMatch(/^\d+$/);

    const zone = await client.request("PUT", "/locations/3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e/zones/3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e");
    expect(zone.status).toBe(404);
    expect(zone.headers.get("allow")).toBe("GET, PATCH");
    const customer = await client.request("POST", "/customers/3f0c8f9e-6a53-4f0a-9a57-0b5e1b1c2d3e");
    expect(customer.headers.get("allow")).toBe("DELETE, GET, PATCH, PUT");
    // A fixed path beside an {id} path is its own path: its methods, whatever the method tried.
    for (const method of ["PUT", "GET", "DELETE"]) expect((await client.request(method, "/estimates/preview")).headers.get("allow")).toBe("POST");
    for (const method of ["POST", "PATCH"]) expect((await client.request(method, "/tasks/stats")).headers.get("allow")).toBe("GET");
    // Without a key too: nothing about the path's records is looked at.
    expect((await api().request("POST", "/openapi.json")).headers.get("allow")).toBe("GET");
  });

  it("an unknown path is 404 route_not_found without Allow, whatever the method", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const response = await api().request(method, "/no-such-things");
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("route_not_found");
      expect(response.headers.get("allow")).toBeNull();
    }
    const trailing = await api().get("/locations/");
    expect(trailing.status).toBe(404);
    expect(trailing.body.error.code).toBe("route_not_found");
  });
});
