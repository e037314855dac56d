import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";

/**
 * Validators for the OpenRPC document and the result schemas it carries, with Ajv (draft-07).
 * The OpenRPC meta-schema refers to its JSON Schema meta-schema by URL
 * (https://meta.json-schema.tools); both come from npm packages, so nothing is fetched.
 */

// Both packages ship the schema as a CommonJS value that their type declarations leave out.
const require = createRequire(import.meta.url);
const { openrpcDocument } = require("@open-rpc/meta-schema") as { openrpcDocument: object };
const { jsonSchema } = require("@json-schema-tools/meta-schema") as { jsonSchema: object };

const withoutKeys = (schema: object, ...keys: string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(schema).filter(([key]) => !keys.includes(key)));

/** Ajv errors as one line per error, for assertion messages. */
export const ajvErrors = (validate: ValidateFunction): string =>
  (validate.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? ""}`).join("; ");

export function openRpcMetaValidator(): ValidateFunction {
  // $schema names meta.json-schema.tools' own dialect, which Ajv does not know: it is draft-07
  // in substance, so Ajv reads it as draft-07. Both URL spellings occur in the $refs.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const jsonMeta = withoutKeys(jsonSchema, "$schema", "$id");
  ajv.addSchema(jsonMeta, "https://meta.json-schema.tools/");
  ajv.addSchema(jsonMeta, "https://meta.json-schema.tools");
  return ajv.compile(withoutKeys(openrpcDocument, "$schema"));
}

/** Compiles result schemas; strict, so a schema keyword Ajv does not know fails loudly. */
export function resultValidators(): (schema: object) => ValidateFunction {
  const ajv = new Ajv({ strict: true, allErrors: true, allowUnionTypes: true });
  return (schema) => ajv.compile(schema);
}
