import { createApiHandler } from "../../lib/http/api-handler.js";
import { stockTransferRoutes } from "../../lib/routes/stock-transfers.js";
import { normalizePage } from "../../lib/core/pagination.js";
import { created, ok } from "../../lib/http/responses.js";
import type { ApiRequest } from "../../lib/http/types.js";
import {
  createStockTransfer,
  deleteStockTransfer,
  getStockTransfer,
  listStockTransfers,
  receiveStockTransfer,
  sendStockTransfer,
  updateStockTransfer,
} from "../../lib/domain/documents/stock-transfers/service.js";
import type {
  StockTransferCreateBody,
  StockTransferListQuery,
  StockTransferReceiveBody,
  StockTransferSendBody,
  StockTransferUpdateBody,
} from "../../lib/schemas/stock-transfers.js";

type TransferParams = { stock_transfer_id: string };

/** Endpoint group `stock-transfers`. */
export const handler = createApiHandler(stockTransferRoutes, {
  listStockTransfers: async (req: ApiRequest<{}, StockTransferListQuery>) =>
    ok(await listStockTransfers(req.principal, req.path, normalizePage(req.query), req.query)),
  getStockTransfer: async (req: ApiRequest<TransferParams>) => ok(await getStockTransfer(req.principal, req.params.stock_transfer_id)),
  createStockTransfer: async (req: ApiRequest<{}, {}, StockTransferCreateBody>) =>
    created(await createStockTransfer(req.principal, req.body, req.completion(201))),
  updateStockTransfer: async (req: ApiRequest<TransferParams, {}, StockTransferUpdateBody>) =>
    ok(await updateStockTransfer(req.principal, req.params.stock_transfer_id, req.body, req.completion(200))),
  sendStockTransfer: async (req: ApiRequest<TransferParams, {}, StockTransferSendBody>) =>
    ok(await sendStockTransfer(req.principal, req.params.stock_transfer_id, req.body, req.completion(200))),
  receiveStockTransfer: async (req: ApiRequest<TransferParams, {}, StockTransferReceiveBody>) =>
    ok(await receiveStockTransfer(req.principal, req.params.stock_transfer_id, req.body, req.completion(200))),
  deleteStockTransfer: async (req: ApiRequest<TransferParams>) =>
    ok(await deleteStockTransfer(req.principal, req.params.stock_transfer_id, req.completion(200))),
});
