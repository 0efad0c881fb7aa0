import { contactRoutes } from "./contacts.js";
import { estimateRoutes } from "./estimates.js";
import { API_PREFIX, pathPattern, routeKey, specificity, type EndpointGroup, type HttpMethod, type RouteDefinition } from "./define.js";
import { itemCategoryRoutes } from "./item-categories.js";
import { itemRoutes } from "./items.js";
import { kitRoutes } from "./kits.js";
import { locationRoutes } from "./locations.js";
import { partyRoutes } from "./parties.js";
import { platformRoutes } from "./platform.js";
import { purchaseOrderRoutes } from "./purchase-orders.js";
import { salesOrderRoutes } from "./sales-orders.js";
import { invoiceRoutes } from "./invoices.js";
import { stockTransferRoutes } from "./stock-transfers.js";
import { syncRoutes } from "./sync.js";
import { taskRoutes } from "./tasks.js";
import { webhookRoutes } from "./webhooks.js";

export * from "./define.js";

/**
 * THE route table: every route of every endpoint group, in one list. Readers that need the
 * whole surface (the CDK stack, the local server, the OpenAPI document, the tests) import it
 * from here; a group's Lambda imports only its own route file.
 */
export const ROUTES: readonly RouteDefinition[] = [
  ...platformRoutes,
  ...locationRoutes,
  ...itemCategoryRoutes,
  ...itemRoutes,
  ...contactRoutes,
  ...partyRoutes,
  ...syncRoutes,
  ...purchaseOrderRoutes,
  ...stockTransferRoutes,
  ...kitRoutes,
  ...taskRoutes,
  ...estimateRoutes,
  ...salesOrderRoutes,
  ...invoiceRoutes,
  ...webhookRoutes,
];

const byKey = new Map(ROUTES.map((r) => [routeKey(r), r]));

export function findRouteByKey(key: string): RouteDefinition | undefined {
  return byKey.get(key);
}

export function routesOfGroup(group: EndpointGroup): RouteDefinition[] {
  return ROUTES.filter((r) => r.group === group);
}

const compiled = ROUTES.map((r) => ({
  route: r,
  names: [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
  // A route with `trailingSlash` also matches its path with one trailing slash.
  pattern: pathPattern(r.path, r.trailingSlash),
})).sort((a, b) => specificity(a.route.path, b.route.path)); // stable: otherwise table order

/** A path segment decoded as API Gateway decodes it; a malformed escape is kept as sent. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Matches a concrete request the way API Gateway does: returns the route and the decoded
 * path parameters, or undefined when no route has this method and path.
 */
export function matchRoute(method: string, path: string): { route: RouteDefinition; pathParameters: Record<string, string> } | undefined {
  for (const { route: candidate, names, pattern } of compiled) {
    if (candidate.method !== method) continue;
    const match = pattern.exec(path);
    if (!match) continue;
    const pathParameters: Record<string, string> = {};
    names.forEach((name, i) => {
      pathParameters[name] = decodeSegment(match[i + 1]!);
    });
    return { route: candidate, pathParameters };
  }
  return undefined;
}

/**
 * Whether a path no route serves (404) belongs to a resource whose routes declare
 * `noStore` (e.g. anything under `/tasks`): its "every response is no-store" covers those too.
 */
export function noStoreAtPath(path: string): boolean {
  const resourceOf = (p: string) => p.slice(API_PREFIX.length).split("/")[1];
  const resource = path.startsWith(`${API_PREFIX}/`) ? resourceOf(path) : undefined;
  return resource !== undefined && compiled.some(({ route }) => route.noStore === true && resourceOf(route.path) === resource);
}

/**
 * The methods the path serves (for 405 and `Allow`), sorted: those of the most specific route
 * path it matches, as a request is matched (`/estimates/preview` is its own path, not an
 * `/estimates/{estimate_id}`).
 */
export function methodsAtPath(path: string): HttpMethod[] {
  const template = compiled.find(({ pattern }) => pattern.test(path))?.route.path;
  const methods = new Set<HttpMethod>();
  for (const { route: candidate } of compiled) if (candidate.path === template) methods.add(candidate.method);
  return [...methods].sort();
}
