import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import type { Handlers, MethodDefinition, MethodTable } from "./method.ts";
import { CHAIN_METHODS, chainHandlers } from "./methods/chain.ts";
import { NET_METHODS, netHandlers } from "./methods/net.ts";
import { RPC_METHODS, rpcHandlers } from "./methods/rpc.ts";
import { STATE_METHODS, stateHandlers } from "./methods/state.ts";
import type { DocumentedMethod } from "./openrpc.ts";
import type { RpcContext } from "./types.ts";

/**
 * The whole HTTP API in one table, in the order docs/rpc.md and rpc.discover list it: every
 * `chain_*` method, then `net_*`, then `rpc.discover`. Each is defined (params, result, errors)
 * under its full name in methods/<namespace>.ts, beside the handlers that the node's context
 * makes for it.
 */
const METHODS = { ...CHAIN_METHODS, ...STATE_METHODS, ...NET_METHODS, ...RPC_METHODS } satisfies MethodTable;

export type MethodName = keyof typeof METHODS;

/** The table as a list of names and specs: no node needed. */
export const METHOD_LIST: readonly DocumentedMethod[] = Object.entries(METHODS).map(([name, spec]) => ({
  name,
  spec,
}));

/** A method ready to serve: its definition and its compiled params validator. */
export interface Route {
  name: string;
  definition: MethodDefinition;
  check: TypeCheck<TSchema>;
}

/** Joins each spec with its handler; a method without a handler does not type-check. */
export function createRoutes(context: RpcContext): Map<string, Route> {
  const handlers: Handlers<typeof METHODS> = {
    ...chainHandlers(context),
    ...stateHandlers(context),
    ...netHandlers(context),
    ...rpcHandlers(METHOD_LIST, () => context.network.nodeInfo().version),
  };
  const routes = new Map<string, Route>();
  for (const { name, spec } of METHOD_LIST) {
    const handler = handlers[name as MethodName] as (params: unknown) => unknown;
    routes.set(name, { name, definition: { ...spec, handler }, check: TypeCompiler.Compile(spec.params) });
  }
  return routes;
}
