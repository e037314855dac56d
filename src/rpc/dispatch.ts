import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import {
  invalidParams,
  invalidRequest,
  limitExceeded,
  RPC_ERROR_CODES,
  type RpcErrorObject,
  toRpcError,
} from "./errors.ts";
import type { RpcServerHooks, RpcServerOptions } from "./options.ts";
import { RawJson } from "./rawJson.ts";
import type { Route } from "./routes.ts";

type JsonRpcId = string | number | null;

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: RpcErrorObject;
}

export const errorResponse = (id: JsonRpcId, error: RpcErrorObject): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error,
});

const errorText = (id: JsonRpcId, error: RpcErrorObject): string => JSON.stringify(errorResponse(id, error));

/** A reply as JSON text, or as UTF-8 chunks when a result came serialized (RawJson). */
export type Reply = string | RawJson;

const textOf = (reply: Reply): string => (typeof reply === "string" ? reply : reply.text());

const OPEN_BATCH = Buffer.from("[");
const CLOSE_BATCH = Buffer.from("]");
const CLOSE_REPLY = Buffer.from("}");

/** What is left of one batch's maxResponseBytes for the results of its remaining calls. */
interface ReplyBudget {
  bytesLeft: number;
}

const batchTooLarge = (limit: number) =>
  limitExceeded(`the results of this batch exceed ${limit} bytes together`, "response_too_large", { limit });

/**
 * The JSON-RPC 2.0 envelope (DESIGN.md §2) over the method table: single calls, batches and
 * notifications, params validation, result size limits (one budget per batch) and the error
 * envelope. Transport-free: the HTTP server (server.ts) and the WebSocket endpoint (ws.ts) hand
 * it parsed payloads.
 */
export class JsonRpcDispatcher {
  private readonly routes: ReadonlyMap<string, Route>;
  private readonly options: Pick<RpcServerOptions, "maxBatchItems" | "maxResponseBytes">;
  private readonly log: Logger;
  private readonly hooks: RpcServerHooks;

  constructor(
    routes: ReadonlyMap<string, Route>,
    options: Pick<RpcServerOptions, "maxBatchItems" | "maxResponseBytes">,
    log: Logger,
    hooks: RpcServerHooks,
  ) {
    this.routes = routes;
    this.options = options;
    this.log = log;
    this.hooks = hooks;
  }

  /**
   * Dispatches one parsed JSON-RPC payload (object or batch) and returns the reply as JSON text
   * (each result is serialized once, when its size is checked); undefined means "no content".
   */
  async handlePayload(payload: unknown): Promise<string | undefined> {
    const reply = await this.replyTo(payload);
    return reply === undefined ? undefined : textOf(reply);
  }

  /** As handlePayload, but a reply that holds a serialized result stays in chunks (see RawJson): HTTP sends them as they are. */
  async replyTo(payload: unknown): Promise<Reply | undefined> {
    if (!Array.isArray(payload)) return this.handleCall(payload);
    if (payload.length === 0) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("empty batch").toObject());
    }
    if (payload.length > this.options.maxBatchItems) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(
        null,
        invalidRequest(
          `batch of ${payload.length} exceeds ${this.options.maxBatchItems}`,
          "batch_too_large",
        ).toObject(),
      );
    }
    // Calls start in order (each handler's synchronous part runs before the next one starts),
    // so a batch of dependent transactions is admitted in the order it was written.
    // The results of one batch share one maxResponseBytes budget. Without it a batch of 100
    // chain_getBlocks of 8 MB each made the server build all 800 MB of results, fail to join them
    // (HTTP 500, "Invalid string length") and grow by 1.8 GB (test/load/limitsUnderAttack.test.ts).
    // A synchronous handler's result is counted before the next call starts, so the calls past
    // the budget never run.
    const budget: ReplyBudget = { bytesLeft: this.options.maxResponseBytes };
    const responses = await Promise.all(payload.map((call) => this.handleCall(call, budget)));
    const answered = responses.filter((r) => r !== undefined);
    if (answered.length === 0) return undefined;
    if (answered.every((r) => typeof r === "string")) return `[${answered.join(",")}]`;
    const parts = answered.map((r) => (typeof r === "string" ? new RawJson(r) : r));
    return RawJson.join(OPEN_BATCH, parts, CLOSE_BATCH);
  }

  private async handleCall(call: unknown, budget?: ReplyBudget): Promise<Reply | undefined> {
    if (call === null || typeof call !== "object" || Array.isArray(call)) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("a request is a JSON object").toObject());
    }
    const request = call as Record<string, unknown>;
    const hasId = "id" in request;
    const id = request.id;
    const validId = id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    if (hasId && !validId) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("id must be a string, number or null").toObject());
    }
    const replyId = hasId ? (id as JsonRpcId) : null;
    if (request.jsonrpc !== "2.0" || typeof request.method !== "string") {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(
        replyId,
        invalidRequest('expected {"jsonrpc": "2.0", "method": String, ...}').toObject(),
      );
    }
    const response = await this.invoke(request.method, request.params, replyId, budget);
    return hasId ? response : undefined; // a notification gets no reply
  }

  private async invoke(name: string, params: unknown, id: JsonRpcId, budget?: ReplyBudget): Promise<Reply> {
    const started = performance.now();
    const route = this.routes.get(name);
    if (route === undefined) {
      this.reportCall("unknown", RPC_ERROR_CODES.methodNotFound, (performance.now() - started) / 1000);
      return errorText(id, {
        code: RPC_ERROR_CODES.methodNotFound,
        message: `method ${name} does not exist`,
      });
    }
    const limit = this.options.maxResponseBytes;
    try {
      const args = params === undefined ? {} : params;
      if (args === null || typeof args !== "object" || Array.isArray(args)) {
        throw invalidParams("params must be an object of named members");
      }
      if (!route.check.Check(args)) {
        const first = route.check.Errors(args).First();
        const where = first?.path ? `params${first.path.replaceAll("/", ".")}` : "params";
        throw invalidParams(`${where}: ${first?.message ?? "invalid"}`, { path: first?.path ?? "" });
      }
      if (budget !== undefined && budget.bytesLeft <= 0) throw batchTooLarge(limit);
      // Not `await` on a plain value: the budget must be charged before the next call of a batch starts.
      const produced: unknown = route.definition.handler(args);
      const value = produced instanceof Promise ? ((await produced) as unknown) : produced;
      const result = value instanceof RawJson ? value : JSON.stringify(value ?? null);
      const size = result instanceof RawJson ? result.size : Buffer.byteLength(result);
      if (size > limit) {
        throw limitExceeded(`result is ${size} bytes; the limit is ${limit}`, "response_too_large");
      }
      if (budget !== undefined) {
        if (size > budget.bytesLeft) {
          budget.bytesLeft = 0;
          throw batchTooLarge(limit);
        }
        budget.bytesLeft -= size;
      }
      this.reportCall(name, "ok", (performance.now() - started) / 1000);
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
      if (typeof result === "string") return `${head}${result}}`;
      return RawJson.join(Buffer.from(head), [result], CLOSE_REPLY);
    } catch (error) {
      const mapped = toRpcError(error, randomUUID);
      this.reportCall(name, mapped.error.code, (performance.now() - started) / 1000);
      if (mapped.unexpected) {
        this.log.error(
          { err: error, method: name, faultId: mapped.error.data?.fault_id },
          "internal error in handler",
        );
      } else {
        this.log.debug(
          { method: name, code: mapped.error.code, reason: mapped.error.data?.reason },
          "request refused",
        );
      }
      return errorText(id, mapped.error);
    }
  }

  /** Tells the onCall hook (metrics) of a call and how it ended; a failing hook is logged, not thrown. */
  reportCall(method: string, outcome: number | "ok", seconds: number): void {
    if (this.hooks.onCall === undefined) return;
    try {
      this.hooks.onCall(method, outcome, seconds);
    } catch (error) {
      this.log.warn({ err: error, method }, "onCall hook failed");
    }
  }
}
