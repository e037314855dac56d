import type { Static, TSchema } from "@sinclair/typebox";
import type { MethodErrorDoc } from "./errorDocs.ts";

/** One JSON-RPC method: its params schema, a one-line doc, and the handler. */
export interface MethodDefinition<S extends TSchema = TSchema> {
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
   * for the OpenRPC document.
   */
  errors?: readonly MethodErrorDoc[];
  handler(params: Static<S>): unknown;
}

/** Keeps the handler's params typed by its schema. */
export function method<S extends TSchema>(definition: MethodDefinition<S>): MethodDefinition {
  return definition as unknown as MethodDefinition;
}
