import type { Handlers, MethodTable } from "../method.ts";
import {
  createOpenRpcDocument,
  DISCOVER_METHOD,
  type DocumentedMethod,
  type OpenRpcDocument,
} from "../openrpc.ts";
import { OpenRpcDocumentSchema } from "../resultSchemas.ts";
import { NoParams } from "../schemas.ts";

/** `rpc.discover` (OpenRPC service discovery), whose name the OpenRPC spec fixes outside our namespaces. */
export const RPC_METHODS = {
  [DISCOVER_METHOD]: {
    params: NoParams,
    summary: "The OpenRPC 1.3 document of this API: every method with its params, result schema and errors.",
    result: "OpenrpcDocument",
    resultSchema: OpenRpcDocumentSchema,
  },
} satisfies MethodTable;

/** The document of `methods` (the whole table, static), built on the first call and kept. */
export function rpcHandlers(
  methods: readonly DocumentedMethod[],
  version: () => string,
): Handlers<typeof RPC_METHODS> {
  let document: OpenRpcDocument | undefined;
  return {
    [DISCOVER_METHOD]: () => {
      document ??= createOpenRpcDocument(methods, version());
      return document;
    },
  };
}
