import { type MethodDefinition, method } from "../method.ts";
import { createOpenRpcDocument, type DocumentedMethod, type OpenRpcDocument } from "../openrpc.ts";
import { OpenRpcDocumentSchema } from "../resultSchemas.ts";
import { NoParams } from "../schemas.ts";

/**
 * `rpc.discover` (OpenRPC service discovery). `methods` is the finished route table, this method
 * included; the document is built on the first call, once the table can no longer change.
 */
export function discoverMethod(
  methods: () => Iterable<DocumentedMethod>,
  version: () => string,
): MethodDefinition {
  let document: OpenRpcDocument | undefined;
  return method({
    params: NoParams,
    summary: "The OpenRPC 1.3 document of this API: every method with its params, result schema and errors.",
    result: "OpenrpcDocument",
    resultSchema: OpenRpcDocumentSchema,
    handler: () => {
      document ??= createOpenRpcDocument(methods(), version());
      return document;
    },
  });
}
