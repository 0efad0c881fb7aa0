import { createApiHandler } from "../../lib/http/api-handler.js";
import { estimateRoutes } from "../../lib/routes/estimates.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { ok, withEtag } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  createEstimate,
  declineEstimate,
  deleteEstimate,
  getEstimate,
  listEstimates,
  previewEstimate,
  updateEstimate,
} from "../../lib/domain/documents/estimates/service.js";
import { convertEstimateToInvoice, convertEstimateToSalesOrder } from "../../lib/domain/documents/estimates/conversions.js";
import type { EstimateCreateBody, EstimateListQuery, EstimateUpdateBody } from "../../lib/schemas/estimates.js";

type EstimateParams = { estimate_id: string };

/** Endpoint group `estimates`. */
export const handler = createApiHandler(estimateRoutes, {
  createEstimate: async (req: ApiRequest<{}, {}, EstimateCreateBody>) => withEtag(await createEstimate(req.principal, req.body, req.completion(201)), 201),
  previewEstimate: async (req: ApiRequest<{}, {}, EstimateCreateBody>) => ok(await previewEstimate(req.principal, req.body, undefined, req.bodyProblems)),
  listEstimates: async (req: ApiRequest<{}, EstimateListQuery>) => ok(await listEstimates(req.principal, req.path, normalizePage(req.query), req.query)),
  getEstimate: async (req: ApiRequest<EstimateParams>) => withEtag(await getEstimate(req.principal, req.params.estimate_id)),
  updateEstimate: async (req: ApiRequest<EstimateParams, {}, EstimateUpdateBody>) =>
    withEtag(await updateEstimate(req.principal, req.params.estimate_id, req.body, req.headers["if-match"], req.completion(200))),
  previewEstimateChanges: async (req: ApiRequest<EstimateParams, {}, EstimateUpdateBody>) =>
    ok(await previewEstimate(req.principal, req.body, { id: req.params.estimate_id, ifMatch: req.headers["if-match"] }, req.bodyProblems)),
  declineEstimate: async (req: ApiRequest<EstimateParams>) =>
    withEtag(await declineEstimate(req.principal, req.params.estimate_id, req.headers["if-match"], req.completion(200))),
  deleteEstimate: async (req: ApiRequest<EstimateParams>) =>
    ok(await deleteEstimate(req.principal, req.params.estimate_id, req.headers["if-match"], req.completion(200))),
  convertEstimateToInvoice: async (req: ApiRequest<EstimateParams, {}, { issue_date?: string }>) =>
    withEtag(await convertEstimateToInvoice(req.principal, req.params.estimate_id, req.body, req.headers["if-match"], req.completion(201)), 201),
  convertEstimateToSalesOrder: async (req: ApiRequest<EstimateParams>) =>
    withEtag(await convertEstimateToSalesOrder(req.principal, req.params.estimate_id, req.headers["if-match"], req.completion(201)), 201),
});
