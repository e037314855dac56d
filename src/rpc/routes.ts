import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { TSchema } from "@sinclair/typebox";
import type { MethodDefinition } from "./method.ts";
import { chainMethods } from "./methods/chain.ts";
import { netMethods } from "./methods/net.ts";
import { discoverMethod } from "./methods/rpc.ts";
import { DISCOVER_METHOD } from "./openrpc.ts";
import type { RpcContext } from "./types.ts";

/** A method ready to serve: its definition and its compiled params validator. */
export interface Route {
  name: string;
  definition: MethodDefinition;
  check: TypeCheck<TSchema>;
}

const route = (name: string, definition: MethodDefinition): Route => ({
  name,
  definition,
  check: TypeCompiler.Compile(definition.params),
});

/**
 * The whole API in one table: every `chain_*` and `net_*` method, by name, then `rpc.discover`,
 * whose name the OpenRPC spec fixes outside the namespaces.
 * Handlers live in methods/<namespace>.ts under the name without its prefix.
 */
export function createRoutes(context: RpcContext): Map<string, Route> {
  const namespaces: Record<string, Record<string, MethodDefinition>> = {
    chain: chainMethods(context),
    net: netMethods(context),
  };
  const routes = new Map<string, Route>();
  for (const [namespace, methods] of Object.entries(namespaces)) {
    for (const [short, definition] of Object.entries(methods)) {
      const name = `${namespace}_${short}`;
      routes.set(name, route(name, definition));
    }
  }
  const discover = discoverMethod(
    () => routes.values(),
    () => context.network.nodeInfo().version,
  );
  routes.set(DISCOVER_METHOD, route(DISCOVER_METHOD, discover));
  return routes;
}
