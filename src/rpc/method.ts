import type { Static, TSchema } from "@sinclair/typebox";
import type { MethodErrorDoc } from "./errorDocs.ts";

/**
 * What a JSON-RPC method is, apart from what it does: its params schema, a one-line doc, its
 * result and the errors it raises. Static data (methods/<namespace>.ts), so listing the API,
 * writing docs/rpc.md and building the OpenRPC document need no node.
 */
export interface MethodSpec<S extends TSchema = TSchema> {
  params: S;
  summary: string;
  /** What the result is, in the spec's words (used for docs). */
  result: string;
  /**
   * The JSON Schema of the result (resultSchemas.ts), served by `rpc.discover` and checked
   * against real responses by the tests.
   */
  resultSchema: TSchema;
  /**
   * Errors this method raises beyond those every method can (COMMON_ERRORS in errorDocs.ts),
   * for the OpenRPC document and docs/rpc.md.
   */
  errors?: readonly MethodErrorDoc[];
}

/** Method specs by full name (`chain_getBlockByHash`): the name is written where it is defined. */
export type MethodTable = Readonly<Record<string, MethodSpec>>;

/** One handler per method of a table, its params typed by the method's schema. */
export type Handlers<T extends MethodTable> = { [K in keyof T]: (params: Static<T[K]["params"]>) => unknown };

/** A method ready to run: its spec and the handler built from the node's context. */
export interface MethodDefinition extends MethodSpec {
  handler(params: unknown): unknown;
}
