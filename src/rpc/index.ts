/**
 * rpc: the JSON-RPC 2.0 interface. Owns: HTTP gatekeeping, the envelope, params validation
 * (TypeBox schemas), the method table and result shapes, and the WebSocket endpoint with its
 * subscriptions (ws.ts, subscriptions.ts). Does not own: any chain logic; handlers
 * call the narrow views in types.ts, which node/ supplies.
 */
export { RPC_ERROR_CODES, RpcError } from "./errors.ts";
export { COMMON_ERRORS, type MethodErrorDoc, TX_REJECT_REASON_DETAILS } from "./errorDocs.ts";
export type { MethodDefinition, MethodSpec } from "./method.ts";
export {
  createOpenRpcDocument,
  DISCOVER_METHOD,
  type DocumentedMethod,
  type JsonSchema,
  OPENRPC_VERSION,
  type OpenRpcDocument,
  type OpenRpcMethod,
  toJsonSchema,
} from "./openrpc.ts";
export { defaultRpcServerOptions, type RpcServerHooks, type RpcServerOptions } from "./options.ts";
export { WEBSOCKET_ONLY_REASON, websocketOnlyRoutes } from "./methods/subscription.ts";
export { createRoutes, METHOD_LIST, type MethodName, type Route } from "./routes.ts";
export { type HttpHandler, RpcServer, type UpgradeHandler } from "./server.ts";
export {
  NOTIFICATION_METHOD,
  SubscriptionHub,
  type SubscriptionLimits,
  type SubscriptionSource,
  type SubscriptionTopic,
} from "./subscriptions.ts";
export type { NodeInfo, RpcChainView, RpcContext, RpcLimits, RpcNetworkView, RpcTxPool } from "./types.ts";
export { type PayloadHandler, WebSocketEndpoint, type WebSocketLimits } from "./ws.ts";
