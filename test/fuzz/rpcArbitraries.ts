import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { Ajv, type ValidateFunction } from "ajv";
import fc from "fast-check";
import { normalizeReadPath } from "../../src/chain/index.ts";

/**
 * Hostile-input generators for the JSON-RPC endpoint and the checks every reply must pass
 * (DESIGN.md §2, §9). Shared by test/rpc/fuzz.test.ts (CI count) and scripts/fuzzRpc.ts (long
 * runs), so the two cannot drift.
 *
 * The checks never trust the generator's intent: the expected reply is derived from the bytes
 * actually sent (parsed with JSON.parse, as any JSON-RPC server must) and from the params schemas
 * the node itself publishes in `rpc.discover`.
 */

// ---- limits and documented codes (DESIGN.md §2, §9) ------------------------------------------

export const MAX_BATCH_ITEMS = 100;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
export const MAX_BLOCK_RANGE = 100;

export const CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  txRejected: -32003,
  limitExceeded: -32005,
} as const;

/** The -32003 reasons DESIGN.md §2 lists. */
export const TX_REJECT_REASONS = new Set([
  "invalid_signature",
  "wrong_chain_id",
  "hash_mismatch",
  "nonce_too_low",
  "nonce_too_high",
  "already_known",
  "stale_timestamp",
  "tx_too_large",
  "pool_full",
  "account_pool_full",
  "permission_denied",
  "insufficient_balance",
  "invalid_operation",
]);

// ---- HTTP client (keep-alive, real sockets) ------------------------------------------------------

export interface HttpReply {
  status: number;
  contentType: string | undefined;
  allow: string | undefined;
  text: string;
}

export interface SendOptions {
  method?: string;
  path?: string;
  /** undefined sends application/json; null sends no Content-Type header at all. */
  contentType?: string | null;
  /** Send without Content-Length (chunked), so the server cannot refuse on the header alone. */
  chunked?: boolean;
}

export interface RpcTarget {
  send(body: string | Uint8Array, options?: SendOptions): Promise<HttpReply>;
  close(): void;
}

/** A keep-alive HTTP client for one node URL (127.0.0.1). */
export function createTarget(url: string): RpcTarget {
  const { hostname, port } = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  return {
    send(body, options = {}) {
      const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body);
      const headers: Record<string, string | number> = {};
      if (options.contentType !== null) headers["content-type"] = options.contentType ?? "application/json";
      if (options.chunked !== true) headers["content-length"] = bytes.length;
      return new Promise<HttpReply>((resolve, reject) => {
        const req = request(
          {
            host: hostname,
            port,
            agent,
            method: options.method ?? "POST",
            path: options.path ?? "/",
            headers,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                contentType: res.headers["content-type"],
                allow: res.headers.allow,
                text: Buffer.concat(chunks).toString("utf8"),
              }),
            );
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(bytes); // every method carries its body, so Content-Length always tells the truth
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** One call that must succeed, for set-up and the state snapshots. */
export async function rpcResult<T = unknown>(
  target: RpcTarget,
  method: string,
  params?: unknown,
): Promise<T> {
  const call: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) call.params = params;
  const reply = await target.send(JSON.stringify(call));
  const parsed = JSON.parse(reply.text) as { result?: T; error?: unknown };
  if (parsed.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(parsed.error)}`);
  return parsed.result as T;
}

// ---- the interface, as the node publishes it -------------------------------------------------------

type JsonSchema = Record<string, unknown>;

export interface MethodSpec {
  name: string;
  params: { name: string; schema: JsonSchema; required: boolean }[];
  /** The whole params object against the published schema (additional members refused). */
  validateParams: ValidateFunction;
  validateResult: ValidateFunction;
}

interface DiscoverDocument {
  methods: {
    name: string;
    params: { name: string; schema: JsonSchema; required?: boolean }[];
    result: { schema: JsonSchema };
  }[];
}

/** Every method of the interface with its params and result schemas, from `rpc.discover`. */
export async function loadMethodSpecs(target: RpcTarget): Promise<MethodSpec[]> {
  const document = await rpcResult<DiscoverDocument>(target, "rpc.discover");
  const ajv = new Ajv({ strict: false, allErrors: false, allowUnionTypes: true });
  return document.methods.map((m) => {
    const params = m.params.map((p) => ({ name: p.name, schema: p.schema, required: p.required === true }));
    const paramsSchema = {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
      required: params.filter((p) => p.required).map((p) => p.name),
    };
    return {
      name: m.name,
      params,
      validateParams: ajv.compile(paramsSchema),
      validateResult: ajv.compile(m.result.schema),
    };
  });
}

/** Real values the node knows (so that some reads find something). */
export interface KnownValues {
  blockHashes: string[];
  addresses: string[];
  txHashes: string[];
}

// ---- generators ---------------------------------------------------------------------------------------

const HEX_CHARS = [..."0123456789abcdefABCDEF"];
const hexString = (length: number) =>
  fc.array(fc.constantFrom(...HEX_CHARS), { minLength: length, maxLength: length }).map((c) => c.join(""));

/** `^0x[0-9a-fA-F]{N}$` → N, the only string patterns the interface uses. */
const hexPatternLength = (schema: JsonSchema): number | undefined => {
  const match =
    typeof schema.pattern === "string" ? /^\^0x\[0-9a-fA-F\]\{(\d+)\}\$$/.exec(schema.pattern) : null;
  return match?.[1] === undefined ? undefined : Number(match[1]);
};

const jsonScalar = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);

/** Any JSON value, of modest size. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3, depthSize: "small" });

/** A SET_VALUE operation of any kind (valid or not: the chain judges it). */
const operationArb = (known: KnownValues) =>
  fc.record({
    type: fc.oneof(fc.constant("SET_VALUE"), fc.string()),
    ref: fc.oneof(
      fc.constantFrom(...known.addresses).map((a) => `/users/${a}/x`),
      fc.constantFrom(...known.addresses).map((a) => `/transfer/${a}/${a}/k/value`),
      fc.constantFrom("/account/x/balance", "/", "", "//", "/users", "/staking/x/k/value"),
      fc.string(),
    ),
    value: anyJson,
  });

/** Values the schema accepts (random hex, bounds, real hashes and addresses). */
export function validValue(schema: JsonSchema, known: KnownValues, name = ""): fc.Arbitrary<unknown> {
  switch (schema.type) {
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : Number.MIN_SAFE_INTEGER;
      const max = typeof schema.maximum === "number" ? schema.maximum : Number.MAX_SAFE_INTEGER;
      return fc.oneof(
        fc.integer({ min, max: Math.min(max, min + 200) }),
        fc.constantFrom(min, max),
        fc.integer({ min, max }),
      );
    }
    case "boolean":
      return fc.boolean();
    case "string": {
      const length = hexPatternLength(schema);
      if (length === undefined) return fc.string({ maxLength: 80 });
      const random = hexString(length).map((h) => `0x${h}`);
      const real =
        length === 40 ? known.addresses : length === 64 ? [...known.blockHashes, ...known.txHashes] : [];
      return real.length === 0 ? random : fc.oneof(random, fc.constantFrom(...real));
    }
    case "array": {
      const items = schema.items as JsonSchema;
      const minItems = typeof schema.minItems === "number" ? schema.minItems : 0;
      return fc.array(validValue(items, known), { minLength: minItems, maxLength: minItems + 2 });
    }
    case "object": {
      const properties = objectProperties(schema);
      if (properties === undefined) return name === "operation" ? operationArb(known) : fc.object();
      const required = (schema.required as string[] | undefined) ?? [];
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([key, s]) => [key, validValue(s, known, key)])),
        { requiredKeys: required },
      );
    }
    default:
      return anyJson;
  }
}

/** The members an object schema names, or undefined when it leaves them open (`operation`). */
const objectProperties = (schema: JsonSchema): Record<string, JsonSchema> | undefined => {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  return properties === undefined || Object.keys(properties).length === 0 ? undefined : properties;
};

const OVERLONG = "ab".repeat(50_000);

/** Values of the wrong type, out of range or malformed for the schema. */
export function invalidValue(schema: JsonSchema, known: KnownValues): fc.Arbitrary<unknown> {
  const wrongType = fc.constantFrom<unknown>(null, true, false, "1", "0x1", 0.5, {}, [], [1], { a: 1 });
  switch (schema.type) {
    case "integer": {
      const min = typeof schema.minimum === "number" ? schema.minimum : Number.MIN_SAFE_INTEGER;
      const max = typeof schema.maximum === "number" ? schema.maximum : Number.MAX_SAFE_INTEGER;
      return fc.oneof(
        wrongType,
        fc.constantFrom(min - 1, max + 1, 2 ** 64, -(2 ** 63), 1e300, -1e300, Number.MIN_VALUE, 1.5, -0.5),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
        fc.integer({ min: -(2 ** 31), max: min - 1 }),
      );
    }
    case "boolean":
      return fc.oneof(
        wrongType.filter((v) => typeof v !== "boolean"),
        fc.constantFrom<unknown>(0, 1, "true"),
      );
    case "string": {
      const length = hexPatternLength(schema);
      const nonString = fc.oneof(
        wrongType.filter((v) => typeof v !== "string"),
        fc.integer(),
      );
      if (length === undefined) return nonString;
      const good = hexString(length);
      return fc.oneof(
        nonString,
        good.map((h) => h), // no 0x prefix
        good.map((h) => `0X${h}`),
        good.map((h) => `0x${h.slice(1)}`), // one digit short
        good.map((h) => `0x${h}0`), // one digit long
        fc
          .tuple(good, fc.nat(length - 1), fc.constantFrom("g", "G", "z", " ", "-", "é", "\u0000"))
          .map(([h, at, c]) => `0x${h.slice(0, at)}${c}${h.slice(at + 1)}`),
        fc.constantFrom("", "0x", `0x${OVERLONG}`, OVERLONG, `${"0x".repeat(length)}`),
        fc.string({ maxLength: 200 }),
      );
    }
    case "array":
      return fc.oneof(
        wrongType.filter((v) => !Array.isArray(v)),
        fc.constant([]),
        fc
          .tuple(
            fc.array(validValue(schema.items as JsonSchema, known), { maxLength: 2 }),
            invalidValue(schema.items as JsonSchema, known),
          )
          .map(([good, bad]) => [...good, bad]),
      );
    case "object":
      return fc.oneof(
        wrongType.filter((v) => v === null || typeof v !== "object" || Array.isArray(v)),
        objectProperties(schema) === undefined ? fc.constant("not an object") : invalidObject(schema, known),
      );
    default:
      return wrongType;
  }
}

/** An object schema's value with one member bad, missing or extra. */
function invalidObject(schema: JsonSchema, known: KnownValues): fc.Arbitrary<unknown> {
  const properties = schema.properties as Record<string, JsonSchema>;
  const required = (schema.required as string[] | undefined) ?? [];
  const base = validValue(schema, known) as fc.Arbitrary<Record<string, unknown>>;
  const keys = Object.keys(properties);
  const variants: fc.Arbitrary<unknown>[] = [
    fc.tuple(base, extraKey(keys), anyJson).map(([value, key, extra]) => ({ ...value, [key]: extra })),
    fc
      .tuple(base, fc.constantFrom(...keys))
      .chain(([value, key]) =>
        invalidValue(properties[key] as JsonSchema, known).map((bad) => ({ ...value, [key]: bad })),
      ),
  ];
  if (required.length > 0) {
    variants.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, key]) => {
        const { [key]: _dropped, ...rest } = value;
        return rest;
      }),
    );
  }
  return fc.oneof(...variants);
}

const extraKey = (known: readonly string[]) =>
  fc
    .oneof(fc.constantFrom("extra", "address", "__proto__", "constructor", "id", "Nonce", ""), fc.string())
    .filter((key) => !known.includes(key));

export interface MethodCall {
  method: string;
  params: unknown;
  /** Whether the generator meant the params to be refused (the check uses the schema, not this). */
  mutated: boolean;
}

/** Every method of the interface, with valid params or params mutated in one way. */
export function methodCallArb(specs: readonly MethodSpec[], known: KnownValues): fc.Arbitrary<MethodCall> {
  return fc.constantFrom(...specs).chain((spec) => {
    const schema: JsonSchema = {
      type: "object",
      properties: Object.fromEntries(spec.params.map((p) => [p.name, p.schema])),
      required: spec.params.filter((p) => p.required).map((p) => p.name),
    };
    const valid = validValue(schema, known) as fc.Arbitrary<Record<string, unknown>>;
    const keys = spec.params.map((p) => p.name);
    const mutations: fc.Arbitrary<MethodCall>[] = [
      valid.map((params) => ({ method: spec.name, params, mutated: false })),
      // an absent params member (allowed only when nothing is required)
      fc.constant({ method: spec.name, params: undefined, mutated: spec.params.some((p) => p.required) }),
      fc.tuple(valid, extraKey(keys), anyJson).map(([params, key, extra]) => ({
        method: spec.name,
        params: { ...params, [key]: extra },
        mutated: true,
      })),
      fc
        .constantFrom<unknown>(null, [], ["0x00"], [1, 2], "params", 7, true)
        .map((params) => ({ method: spec.name, params, mutated: true })),
    ];
    if (spec.params.length > 0) {
      mutations.push(
        fc.tuple(valid, fc.constantFrom(...spec.params)).chain(([params, p]) =>
          invalidValue(p.schema, known).map((bad) => ({
            method: spec.name,
            params: { ...params, [p.name]: bad },
            mutated: true,
          })),
        ),
      );
      const required = spec.params.filter((p) => p.required);
      if (required.length > 0) {
        mutations.push(
          fc.tuple(valid, fc.constantFrom(...required)).map(([params, p]) => {
            const { [p.name]: _dropped, ...rest } = params;
            return { method: spec.name, params: rest, mutated: true };
          }),
        );
      }
    }
    return fc.oneof(...mutations);
  });
}

/** A JSON-RPC id of every type, or none (a notification). */
export const idArb: fc.Arbitrary<{ present: boolean; value: unknown }> = fc.oneof(
  fc.constant({ present: false, value: undefined }),
  fc
    .oneof(
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.double(),
      fc.constantFrom<unknown>(
        null,
        0,
        -0,
        1.5,
        2 ** 53,
        2 ** 64,
        1e308,
        true,
        false,
        {},
        [],
        [1],
        { id: 1 },
        "",
      ),
      fc.object({ maxDepth: 1 }),
      fc.array(jsonScalar, { maxLength: 3 }),
    )
    .map((value) => ({ present: true, value })),
);

/** A request object: mostly well-formed, sometimes with a wrong or missing jsonrpc or method. */
export function requestArb(specs: readonly MethodSpec[], known: KnownValues): fc.Arbitrary<unknown> {
  const jsonrpc = fc.oneof(
    { weight: 6, arbitrary: fc.constant<unknown>("2.0") },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(undefined, "1.0", "2", 2, 2.0, "2.0 ", null, ["2.0"], ""),
    },
  );
  const method = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...specs.map((s) => s.name)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        undefined,
        "",
        "chain_",
        "CHAIN_GETBALANCE",
        "rpc.",
        "__proto__",
        1,
        null,
        {},
        [],
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  );
  const call = fc.oneof(
    { weight: 3, arbitrary: methodCallArb(specs, known) },
    {
      weight: 1,
      arbitrary: fc.record({
        method,
        params: fc.oneof(fc.constant(undefined), anyJson),
        mutated: fc.constant(true),
      }),
    },
  );
  const envelope = fc
    .tuple(
      jsonrpc,
      idArb,
      call,
      fc.option(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 })),
    )
    .map(([version, id, c, extra]) => {
      const request: Record<string, unknown> = { ...(extra ?? {}) };
      if (version !== undefined) request.jsonrpc = version;
      if (id.present) request.id = id.value;
      if (c.method !== undefined) request.method = c.method;
      if (c.params !== undefined) request.params = c.params;
      return request;
    });
  return fc.oneof(
    { weight: 12, arbitrary: envelope },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 1, "x", true, [], [1], {}) },
  );
}

/** A batch: empty, short, or around and beyond the item limit. */
export function batchArb(specs: readonly MethodSpec[], known: KnownValues): fc.Arbitrary<unknown[]> {
  const item = requestArb(specs, known);
  const empty: unknown[] = [];
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(empty) },
    { weight: 20, arbitrary: fc.array(item, { minLength: 1, maxLength: 6 }) },
    {
      weight: 2,
      arbitrary: fc.array(item, { minLength: MAX_BATCH_ITEMS - 2, maxLength: MAX_BATCH_ITEMS + 3 }),
    },
    {
      // all notifications (204 when the envelope is valid)
      weight: 3,
      arbitrary: fc.array(
        fc.constantFrom(...specs.map((s) => s.name)).map((method): unknown => ({ jsonrpc: "2.0", method })),
        { minLength: 1, maxLength: 5 },
      ),
    },
  );
}

// ---- raw bodies ------------------------------------------------------------------------------------------

/** Number literals JSON allows that JavaScript cannot hold exactly (or at all). */
const HUGE_NUMBERS = [
  "1e400",
  "-1e400",
  "1e-400",
  "18446744073709551616",
  "-9223372036854775809",
  "9007199254740993",
  "-0",
  "-0.0",
  "0e0",
  "1.0",
  "1E2",
  `1${"0".repeat(400)}`,
  `0.${"0".repeat(400)}1`,
  `${"9".repeat(5000)}`,
];

/** A JSON text in which one value is replaced by a literal number written out as is. */
const withRawNumber = (specs: readonly MethodSpec[]) =>
  fc
    .tuple(fc.constantFrom(...HUGE_NUMBERS), fc.constantFrom(...specs.map((s) => s.name)), fc.nat(4))
    .map(([number, method, where]) => {
      switch (where) {
        case 0:
          return `{"jsonrpc":"2.0","id":${number},"method":"${method}"}`;
        case 1:
          return `{"jsonrpc":"2.0","id":1,"method":"chain_getBlockByNumber","params":{"number":${number}}}`;
        case 2:
          return `{"jsonrpc":"2.0","id":1,"method":"chain_getBlocks","params":{"from":0,"to":${number}}}`;
        case 3:
          return `{"jsonrpc":${number},"id":1,"method":"net_chainId"}`;
        default:
          return `[{"jsonrpc":"2.0","id":${number},"method":"net_chainId"},${number}]`;
      }
    });

/** Nesting up to 10,000 levels, balanced or not, at the top or inside a member. */
const deepNesting = fc
  .tuple(fc.integer({ min: 1, max: 10_000 }), fc.constantFrom("[", '{"a":'), fc.boolean(), fc.nat(4))
  .map(([depth, open, balanced, where]) => {
    const close = open === "[" ? "]" : "}";
    const inner = open === "[" ? "1" : "1";
    const nested = `${open.repeat(depth)}${inner}${balanced ? close.repeat(depth) : ""}`;
    switch (where) {
      case 0:
        return nested;
      case 1:
        return `{"jsonrpc":"2.0","id":1,"method":"chain_getBalance","params":{"address":${nested}}}`;
      case 2:
        return `{"jsonrpc":"2.0","id":${nested},"method":"net_chainId"}`;
      case 3:
        return `{"jsonrpc":"2.0","id":1,"method":"chain_sendSignedTransaction","params":{"signature":"0x${"11".repeat(97)}","transaction":{"nonce":-1,"timestamp":1,"operation":{"type":"SET_VALUE","ref":"/users/x","value":${nested}}}}}`;
      default:
        return `{"jsonrpc":"2.0","id":1,"method":"net_chainId","params":${nested}}`;
    }
  });

/** A request written with one member repeated (JSON.parse keeps the last). */
const duplicateKeys = (specs: readonly MethodSpec[]) =>
  fc
    .tuple(
      fc.constantFrom("jsonrpc", "id", "method", "params"),
      fc.constantFrom(...specs.map((s) => s.name)),
      fc.constantFrom('"2.0"', '"1.0"', "1", "null", '"chain_getBalance"', "{}", '{"address":"0x1"}', "[]"),
      fc.boolean(),
    )
    .map(([key, method, other, otherFirst]) => {
      const members: [string, string][] = [
        ["jsonrpc", '"2.0"'],
        ["id", "7"],
        ["method", JSON.stringify(method)],
      ];
      const duplicate: [string, string] = [key, other];
      const ordered = otherFirst ? [duplicate, ...members] : [...members, duplicate];
      return `{${ordered.map(([k, v]) => `"${k}":${v}`).join(",")}}`;
    });

export interface RawBody {
  body: string | Uint8Array;
}

/** Bodies of any bytes: random, truncated JSON, deep nesting, huge numbers, duplicate keys. */
export function rawBodyArb(specs: readonly MethodSpec[], known: KnownValues): fc.Arbitrary<RawBody> {
  const validText = fc
    .oneof(requestArb(specs, known), batchArb(specs, known))
    .map((v) => JSON.stringify(v) ?? "");
  const body = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.string({ unit: fc.constantFrom(...'{}[]":,0123456789-+.eE truefalsn\\u'), maxLength: 80 }),
    fc
      .tuple(validText, fc.nat())
      .map(([text, cut]) => text.slice(0, text.length === 0 ? 0 : cut % text.length)),
    validText.map((text) => `\uFEFF${text}`),
    validText.map((text) => ` \n\t${text}\r\n `),
    withRawNumber(specs),
    deepNesting,
    duplicateKeys(specs),
    fc.constantFrom(
      "",
      " ",
      "null",
      "true",
      "0",
      '""',
      "[]",
      "{}",
      "[[]]",
      "[{}]",
      "[null]",
      "[1,2,3]",
      "\u0000",
    ),
  );
  return body.map((b) => ({ body: b }));
}

// ---- HTTP gatekeeping ------------------------------------------------------------------------------------

/** [content type or null (header absent), whether it is JSON per server's rule and DESIGN §2] */
const CONTENT_TYPES: readonly [string | null, boolean][] = [
  [null, true],
  ["application/json", true],
  ["application/json; charset=utf-8", true],
  ["APPLICATION/JSON", true],
  ["application/json-rpc", true],
  ["application/vnd.api+json", true],
  ["text/plain", false],
  ["text/html", false],
  ["application/x-www-form-urlencoded", false],
  ["multipart/form-data; boundary=x", false],
  ["application/xml", false],
  ["application/jsonx", false],
  ["json", false],
];

export interface HttpInput {
  method: string;
  path: string;
  contentType: string | null;
  json: boolean;
  body: string;
}

export function httpInputArb(specs: readonly MethodSpec[], known: KnownValues): fc.Arbitrary<HttpInput> {
  return fc
    .tuple(
      fc.constantFrom("POST", "POST", "POST", "GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
      fc.constantFrom(
        "/",
        "/json-rpc",
        "/json-rpc/",
        "/json-rpc?x=1",
        "/?a=b",
        "/json-rpc//",
        "/nope",
        "/json",
      ),
      fc.constantFrom(...CONTENT_TYPES),
      requestArb(specs, known).map((v) => JSON.stringify(v) ?? ""),
    )
    .map(([method, path, [contentType, json], body]) => ({ method, path, contentType, json, body }));
}

// ---- checks ------------------------------------------------------------------------------------------------

type JsonRpcId = string | number | null;

/** What one request item must be answered with. */
interface ItemExpectation {
  /** Acceptable ids in the reply (JSON text, so -0 and 0 compare as the wire does). */
  ids: string[];
  /** Acceptable error codes; "result" when a successful result is acceptable. */
  outcomes: (number | "result")[];
  /** data.reason required for this error code (when known). */
  reason?: string;
  spec?: MethodSpec;
  method?: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const isValidId = (id: unknown): id is JsonRpcId =>
  id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));

/** undefined: a notification, which gets no reply. */
function expectItem(call: unknown, specs: ReadonlyMap<string, MethodSpec>): ItemExpectation | undefined {
  const invalid = (ids: string[], reason?: string): ItemExpectation => ({
    ids,
    outcomes: [CODES.invalidRequest],
    ...(reason === undefined ? {} : { reason }),
  });
  if (!isObject(call)) return invalid(["null"]);
  const hasId = Object.hasOwn(call, "id");
  if (hasId && !isValidId(call.id)) return invalid(["null"]);
  const echo = hasId ? JSON.stringify(call.id) : "null";
  if (call.jsonrpc !== "2.0" || typeof call.method !== "string") {
    // Not a valid request: JSON-RPC 2.0 says id null when it cannot be read; echoing a readable one is fine.
    return invalid([...new Set([echo, "null"])]);
  }
  if (!hasId) return undefined;
  const method = call.method;
  const spec = specs.get(method);
  if (spec === undefined) return { ids: [echo], outcomes: [CODES.methodNotFound] };
  const params = call.params === undefined ? {} : call.params;
  const refused = (code: number, reason: string): ItemExpectation => ({
    ids: [echo],
    outcomes: [code],
    reason,
    spec,
    method,
  });
  if (!isObject(params) || !spec.validateParams(params))
    return refused(CODES.invalidParams, "invalid_params");
  switch (method) {
    case "chain_getBlocks":
    case "chain_getBlockHeaders": {
      const { from, to } = params as { from: number; to: number };
      if (from > to) return refused(CODES.invalidParams, "invalid_params");
      if (to - from + 1 > MAX_BLOCK_RANGE) return refused(CODES.limitExceeded, "range_too_large");
      break;
    }
    case "chain_getValue":
    case "chain_getProof": {
      const { ref } = params as { ref: string };
      if (normalizeReadPath(ref) === undefined) return refused(CODES.invalidParams, "invalid_params");
      // A height above the head (-32602) or a subtree over the leaf limits (-32005) depends on the
      // node's state at the time, not on the body alone.
      return {
        ids: [echo],
        outcomes: ["result", CODES.invalidParams, CODES.limitExceeded],
        spec,
        method,
      };
    }
    case "chain_getTransactionsByAddress": {
      const { from_block: from, to_block: to } = params as { from_block?: number; to_block?: number };
      if (from !== undefined && to !== undefined && from > to)
        return refused(CODES.invalidParams, "invalid_params");
      break;
    }
    case "chain_sendSignedTransaction":
      // No input here carries a valid signature: every one must be refused (and change nothing).
      return { ids: [echo], outcomes: [CODES.txRejected], spec, method };
    case "chain_sendSignedTransactionBatch": {
      const list = (params as { tx_list: unknown[] }).tx_list;
      if (list.length > MAX_BATCH_ITEMS) return refused(CODES.invalidRequest, "batch_too_large");
      return { ids: [echo], outcomes: [CODES.txRejected], spec, method };
    }
  }
  return { ids: [echo], outcomes: ["result"], spec, method };
}

export type Expectation =
  | { kind: "noContent" }
  | { kind: "single"; item: ItemExpectation }
  | { kind: "batch"; items: ItemExpectation[] };

/** The reply a body must get, derived from the body alone (DESIGN.md §2, §9). */
export function expectReply(body: string | Uint8Array, specs: ReadonlyMap<string, MethodSpec>): Expectation {
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(body).toString("utf8"));
  } catch {
    return { kind: "single", item: { ids: ["null"], outcomes: [CODES.parseError] } };
  }
  if (!Array.isArray(payload)) {
    const item = expectItem(payload, specs);
    return item === undefined ? { kind: "noContent" } : { kind: "single", item };
  }
  if (payload.length === 0)
    return { kind: "single", item: { ids: ["null"], outcomes: [CODES.invalidRequest] } };
  if (payload.length > MAX_BATCH_ITEMS) {
    return {
      kind: "single",
      item: { ids: ["null"], outcomes: [CODES.invalidRequest], reason: "batch_too_large" },
    };
  }
  const items = payload
    .map((call) => expectItem(call, specs))
    .filter((e): e is ItemExpectation => e !== undefined);
  return items.length === 0 ? { kind: "noContent" } : { kind: "batch", items };
}

const ERROR_CODES = new Set<number>(Object.values(CODES));
const REASON_REQUIRED = new Set<number>([CODES.invalidParams, CODES.txRejected, CODES.limitExceeded]);

/** One JSON-RPC 2.0 response object against its expectation. */
function checkResponse(response: unknown, expected: ItemExpectation, where: string): void {
  assert.ok(isObject(response), `${where}: a response is an object, got ${JSON.stringify(response)}`);
  const keys = Object.keys(response).sort();
  const hasResult = Object.hasOwn(response, "result");
  const hasError = Object.hasOwn(response, "error");
  assert.ok(hasResult !== hasError, `${where}: exactly one of result/error, got keys ${keys.join(",")}`);
  assert.deepEqual(
    keys,
    ["error", "id", "jsonrpc", "result"].filter((k) => Object.hasOwn(response, k)),
    where,
  );
  assert.equal(response.jsonrpc, "2.0", `${where}: jsonrpc`);
  assert.ok(Object.hasOwn(response, "id"), `${where}: has an id`);
  const id = JSON.stringify(response.id);
  assert.ok(expected.ids.includes(id), `${where}: id ${id}, expected one of ${expected.ids.join(" ")}`);
  if (hasResult) {
    assert.ok(
      expected.outcomes.includes("result"),
      `${where}: a result where ${expected.outcomes.join("/")} was due: ${JSON.stringify(response.result).slice(0, 300)}`,
    );
    const spec = expected.spec;
    if (spec !== undefined) {
      assert.ok(
        spec.validateResult(response.result),
        `${where}: ${spec.name} result does not match its published schema: ${JSON.stringify(spec.validateResult.errors)}`,
      );
    }
    return;
  }
  const error = response.error;
  assert.ok(isObject(error), `${where}: error is an object`);
  for (const key of Object.keys(error))
    assert.ok(["code", "message", "data"].includes(key), `${where}: error.${key}`);
  assert.ok(Number.isInteger(error.code), `${where}: error.code is an integer`);
  const code = error.code as number;
  assert.notEqual(
    code,
    CODES.internalError,
    `${where}: an internal fault on hostile input: ${JSON.stringify(error)}`,
  );
  assert.ok(ERROR_CODES.has(code), `${where}: undocumented code ${code}`);
  assert.ok(
    expected.outcomes.includes(code),
    `${where}: code ${code} (${JSON.stringify(error).slice(0, 300)}), expected ${expected.outcomes.join("/")}`,
  );
  assert.equal(typeof error.message, "string", `${where}: error.message`);
  if (error.data !== undefined) assert.ok(isObject(error.data), `${where}: error.data is an object`);
  const reason = isObject(error.data) ? error.data.reason : undefined;
  if (REASON_REQUIRED.has(code) || expected.reason !== undefined) {
    assert.equal(typeof reason, "string", `${where}: error.data.reason is required for ${code}`);
  }
  if (expected.reason !== undefined) assert.equal(reason, expected.reason, `${where}: data.reason`);
  if (code === CODES.txRejected) {
    assert.ok(
      TX_REJECT_REASONS.has(reason as string),
      `${where}: -32003 reason ${String(reason)} is not in DESIGN §2`,
    );
  }
}

/** Checks a reply to a POST of `body` with a JSON content type at the JSON-RPC endpoint. */
export function checkReply(
  body: string | Uint8Array,
  reply: HttpReply,
  specs: ReadonlyMap<string, MethodSpec>,
): void {
  const expected = expectReply(body, specs);
  const where = `body ${JSON.stringify(Buffer.from(body).toString("utf8").slice(0, 200))}`;
  assert.notEqual(reply.status, 500, `${where}: HTTP 500`);
  if (expected.kind === "noContent") {
    assert.equal(
      reply.status,
      204,
      `${where}: HTTP status of an all-notification body (${reply.text.slice(0, 200)})`,
    );
    assert.equal(reply.text, "", `${where}: 204 has no body`);
    return;
  }
  assert.equal(reply.status, 200, `${where}: HTTP status (${reply.text.slice(0, 200)})`);
  assert.match(reply.contentType ?? "", /^application\/json/, `${where}: content type`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.text);
  } catch {
    assert.fail(`${where}: reply is not JSON: ${reply.text.slice(0, 200)}`);
  }
  if (expected.kind === "single") {
    checkResponse(parsed, expected.item, where);
    return;
  }
  assert.ok(Array.isArray(parsed), `${where}: a batch gets an array, got ${reply.text.slice(0, 200)}`);
  assert.equal(parsed.length, expected.items.length, `${where}: one response per non-notification`);
  // The node answers in request order (JSON-RPC allows any order; this node documents request order).
  expected.items.forEach((item, index) => {
    checkResponse(parsed[index], item, `${where} [${index}]`);
  });
}

/** Checks the reply to a gatekeeping input (method, path, content type) per DESIGN.md §2. */
export function checkHttpReply(
  input: HttpInput,
  reply: HttpReply,
  specs: ReadonlyMap<string, MethodSpec>,
): void {
  const where = `${input.method} ${input.path} (${input.contentType ?? "no content type"})`;
  assert.notEqual(reply.status, 500, `${where}: HTTP 500`);
  const path = input.path.split("?")[0]?.replace(/(.)\/+$/, "$1");
  if (path !== "/" && path !== "/json-rpc") {
    assert.equal(reply.status, 404, `${where}: no endpoint here`);
    return;
  }
  if (input.method === "OPTIONS") {
    assert.equal(reply.status, 204, where);
    return;
  }
  if (input.method === "GET" && path === "/") {
    assert.equal(reply.status, 200, where);
    assert.match(reply.contentType ?? "", /^text\/html/, where);
    return;
  }
  if (input.method !== "POST") {
    assert.equal(reply.status, 405, `${where}: only POST`);
    assert.match(reply.allow ?? "", /POST/, `${where}: Allow header`);
    if (input.method !== "HEAD") checkErrorBody(reply, CODES.invalidRequest, where);
    return;
  }
  if (!input.json) {
    assert.equal(reply.status, 415, `${where}: not JSON`);
    checkErrorBody(reply, CODES.invalidRequest, where);
    return;
  }
  checkReply(input.body, reply, specs);
}

/** A gatekeeping refusal still carries a JSON-RPC error object (id null). */
function checkErrorBody(reply: HttpReply, code: number, where: string, reason?: string): void {
  const parsed = JSON.parse(reply.text) as unknown;
  checkResponse(
    parsed,
    { ids: ["null"], outcomes: [code], ...(reason === undefined ? {} : { reason }) },
    where,
  );
}

/** An over-limit body gets HTTP 413 with -32005 body_too_large, announced or streamed. */
export function checkOversizeReply(reply: HttpReply, where: string): void {
  assert.equal(reply.status, 413, `${where}: HTTP 413`);
  checkErrorBody(reply, CODES.limitExceeded, where, "body_too_large");
}
