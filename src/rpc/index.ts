/**
 * rpc: the JSON-RPC 2.0 interface. Owns: HTTP gatekeeping, the envelope, params validation
 * (TypeBox schemas), the method table and result shapes. Does not own: any chain logic; handlers
 * call the narrow views in types.ts, which node/ supplies.
 */
export { RPC_ERROR_CODES, RpcError } from "./errors.ts";
export type { MethodDefinition } from "./method.ts";
export { defaultRpcServerOptions, type RpcServerOptions } from "./options.ts";
export { createRoutes, type Route } from "./routes.ts";
export { type HttpHandler, RpcServer, type UpgradeHandler } from "./server.ts";
export type { NodeInfo, RpcChainView, RpcContext, RpcLimits, RpcNetworkView, RpcTxPool } from "./types.ts";
