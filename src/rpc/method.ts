import type { Static, TSchema } from "@sinclair/typebox";

/** One JSON-RPC method: its params schema, a one-line doc, and the handler. */
export interface MethodDefinition<S extends TSchema = TSchema> {
  params: S;
  summary: string;
  /** What the result is, in the spec's words (used for docs). */
  result: string;
  handler(params: Static<S>): unknown;
}

/** Keeps the handler's params typed by its schema. */
export function method<S extends TSchema>(definition: MethodDefinition<S>): MethodDefinition {
  return definition as unknown as MethodDefinition;
}
