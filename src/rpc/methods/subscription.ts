import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { RPC_ERROR_CODES, RpcError } from "../errors.ts";
import type { MethodDefinition } from "../method.ts";
import type { Route } from "../routes.ts";
import { SUBSCRIBE_METHOD, UNSUBSCRIBE_METHOD } from "../subscriptions.ts";

/** `data.reason` of a subscription method called over plain HTTP. */
export const WEBSOCKET_ONLY_REASON = "websocket_only";

// Any params object: the answer over HTTP is the same whatever was sent, so a client learns
// about the transport first instead of fixing params it cannot use here anyway.
const AnyParams = Type.Object({});

const refusal = (name: string, summary: string, result: string): Route => {
  const definition: MethodDefinition = {
    params: AnyParams,
    summary,
    result,
    resultSchema: Type.Unknown(),
    handler: () => {
      // -32601 as geth answers eth_subscribe over HTTP: the method does not exist on this transport.
      throw new RpcError(
        RPC_ERROR_CODES.methodNotFound,
        `${name} works only over a WebSocket connection to /ws (subscriptions need a connection to notify)`,
        { reason: WEBSOCKET_ONLY_REASON },
      );
    },
  };
  return { name, definition, check: TypeCompiler.Compile(AnyParams) };
};

/**
 * Routes that answer the subscription methods over HTTP with a clear -32601 `websocket_only`
 * (instead of a bare "does not exist"). Over /ws, ws.ts serves these names itself before the
 * method table is consulted. They are kept out of the method table, so the generated reference and
 * rpc.discover describe the HTTP methods only; docs/websocket.md describes these.
 */
export function websocketOnlyRoutes(): Route[] {
  return [
    refusal(SUBSCRIBE_METHOD, "Starts a subscription (WebSocket only).", "String (subscription id)"),
    refusal(UNSUBSCRIBE_METHOD, "Ends a subscription (WebSocket only).", "Boolean"),
  ];
}
