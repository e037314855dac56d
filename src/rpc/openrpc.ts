import type { TSchema } from "@sinclair/typebox";
import { COMMON_ERRORS } from "./errorDocs.ts";
import type { MethodSpec } from "./method.ts";

/**
 * The OpenRPC document (https://spec.open-rpc.org) of the method table, built from the same
 * TypeBox schemas that validate requests and describe results: it cannot say something the
 * server does not do, because there is nothing else to build it from.
 */

export const OPENRPC_VERSION = "1.3.2";

/** The service discovery method's name, fixed by the OpenRPC spec (outside our namespaces). */
export const DISCOVER_METHOD = "rpc.discover";

/** A JSON Schema as plain JSON (no TypeBox symbols). */
export type JsonSchema = { readonly [key: string]: unknown };

export interface ContentDescriptor {
  name: string;
  schema: JsonSchema;
  required?: boolean;
  description?: string;
}

export interface OpenRpcError {
  code: number;
  message: string;
  data?: { reason: string };
}

export interface OpenRpcMethod {
  name: string;
  summary: string;
  tags: { name: string }[];
  paramStructure: "by-name";
  params: ContentDescriptor[];
  result: ContentDescriptor;
  errors: OpenRpcError[];
}

export interface OpenRpcDocument {
  openrpc: string;
  info: { title: string; version: string; description: string };
  methods: OpenRpcMethod[];
}

/** A method of the table, by its full name. */
export interface DocumentedMethod {
  name: string;
  spec: MethodSpec;
}

/** TypeBox marks its schemas with symbol keys (kind, optional); JSON text has none of them. */
export const toJsonSchema = (schema: TSchema): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

/** One content descriptor per member of the params object, in declaration order. */
function paramsOf(name: string, params: TSchema): ContentDescriptor[] {
  const schema = toJsonSchema(params);
  if (schema.type !== "object") throw new Error(`${name}: params must be an object schema`);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([member, memberSchema]) => {
    const descriptor: ContentDescriptor = {
      name: member,
      schema: memberSchema,
      required: required.has(member),
    };
    if (typeof memberSchema.description === "string") descriptor.description = memberSchema.description;
    return descriptor;
  });
}

/** The method's own errors first, then the common ones; one entry per code and reason. */
function errorsOf(spec: MethodSpec): OpenRpcError[] {
  const seen = new Set<string>();
  const errors: OpenRpcError[] = [];
  for (const doc of [...(spec.errors ?? []), ...COMMON_ERRORS]) {
    const key = `${doc.code}/${doc.reason ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(
      doc.reason === undefined
        ? { code: doc.code, message: doc.message }
        : { code: doc.code, message: doc.message, data: { reason: doc.reason } },
    );
  }
  return errors;
}

function methodOf({ name, spec }: DocumentedMethod): OpenRpcMethod {
  return {
    name,
    summary: spec.summary,
    // chain_getBalance → chain, rpc.discover → rpc
    tags: [{ name: name.split(/[_.]/)[0] ?? name }],
    paramStructure: "by-name",
    params: paramsOf(name, spec.params),
    result: { name: "result", description: spec.result, schema: toJsonSchema(spec.resultSchema) },
    errors: errorsOf(spec),
  };
}

/** The document for `methods` (the method table, in its order). */
export function createOpenRpcDocument(methods: Iterable<DocumentedMethod>, version: string): OpenRpcDocument {
  return {
    openrpc: OPENRPC_VERSION,
    info: {
      title: "chain-node JSON-RPC",
      version,
      description:
        "JSON-RPC 2.0 over HTTP POST at / or /json-rpc. Params are one object of named members. " +
        "Transport errors beyond the methods' own: -32700 (body not JSON), -32600 (not a request, " +
        "empty or too large batch), -32601 (unknown method).",
    },
    methods: [...methods].map(methodOf),
  };
}
