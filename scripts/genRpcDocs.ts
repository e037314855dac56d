/**
 * Writes docs/rpc.md, the JSON-RPC reference, from the method table (src/rpc/routes.ts), its
 * TypeBox params schemas, the error and limit definitions in the code, and request/response
 * examples captured from real dev nodes over HTTP. Nothing in the reference is kept by hand:
 * change the code and run
 *
 *     npm run docs:rpc
 *
 * The structure of the output is deterministic; the examples' hashes and timestamps differ run
 * to run. Every node started here is stopped in a `finally`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EXEC_FAILURE_CODES, GENESIS_PROPOSER, TX_REJECT_REASONS } from "../src/chain/index.ts";
import type { DerivedAccount } from "../src/crypto/index.ts";
import { defaultNodeOptions, devAccounts, devGenesis, SETTINGS } from "../src/node/index.ts";
import {
  COMMON_ERRORS,
  DISCOVER_METHOD,
  type DocumentedMethod,
  METHOD_LIST,
  type MethodErrorDoc,
  RPC_ERROR_CODES,
  TX_REJECT_REASON_DETAILS,
} from "../src/rpc/index.ts";
import { signTx, startTestNode, type TestNode, transferBody, waitFor } from "../test/helpers/testNode.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUTPUT = resolve(ROOT, "docs/rpc.md");

// ---------------------------------------------------------------------------------------------
// Reading JSON Schema (TypeBox schemas are plain JSON Schema objects).

type JsonObject = Readonly<Record<string, unknown>>;

const asObject = (value: unknown): JsonObject | undefined =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : undefined;

function mustObject(value: unknown, what: string): JsonObject {
  const object = asObject(value);
  if (object === undefined)
    throw new Error(`expected ${what} to be a JSON object, got ${JSON.stringify(value)}`);
  return object;
}

function typeName(schema: JsonObject): string {
  switch (schema.type) {
    case "integer":
      return "Integer";
    case "number":
      return "Number";
    case "string":
      return "String";
    case "boolean":
      return "Boolean";
    case "object":
      return "Object";
    case "array": {
      const items = asObject(schema.items);
      return items === undefined ? "Array" : `Array of ${typeName(items)}`;
    }
    default:
      return "any JSON value";
  }
}

const entries = (n: number): string => (n === 1 ? "1 entry" : `${n} entries`);

const bound = (value: number): string => (value === Number.MAX_SAFE_INTEGER ? "2^53 − 1" : String(value));

function constraints(schema: JsonObject): string {
  const notes: string[] = [];
  if (typeof schema.description === "string") notes.push(schema.description);
  if (typeof schema.pattern === "string") notes.push(`pattern \`${schema.pattern}\``);
  if (typeof schema.minimum === "number") notes.push(`minimum ${bound(schema.minimum)}`);
  if (typeof schema.maximum === "number") notes.push(`maximum ${bound(schema.maximum)}`);
  if (typeof schema.minItems === "number") notes.push(`at least ${entries(schema.minItems)}`);
  if (typeof schema.maxItems === "number") notes.push(`at most ${entries(schema.maxItems)}`);
  const properties = asObject(schema.properties);
  if (
    schema.additionalProperties === false &&
    properties !== undefined &&
    Object.keys(properties).length > 0
  ) {
    notes.push("no other members");
  }
  return notes.length === 0 ? "—" : notes.join("; ");
}

interface ParamRow {
  member: string;
  type: string;
  required: boolean;
  notes: string;
}

/** One row per member, nested objects flattened as `a.b` and array entries as `a[].b`. */
function paramRows(schema: JsonObject, prefix = "", rows: ParamRow[] = []): ParamRow[] {
  const properties = asObject(schema.properties) ?? {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const [name, raw] of Object.entries(properties)) {
    const member = mustObject(raw, `schema of ${prefix}${name}`);
    const path = `${prefix}${name}`;
    rows.push({
      member: path,
      type: typeName(member),
      required: required.includes(name),
      notes: constraints(member),
    });
    if (member.type === "object") paramRows(member, `${path}.`, rows);
    const items = asObject(member.items);
    if (member.type === "array" && items?.type === "object") paramRows(items, `${path}[].`, rows);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Errors and limits: which method raises which error is in the method table (src/rpc/errorDocs.ts);
// limits and their defaults are read off the settings table (src/node/settings.ts).

const C = RPC_ERROR_CODES;
const DEFAULTS = defaultNodeOptions("/nonexistent-home");
const GENESIS = devGenesis(devAccounts(), 0);

/** A setting's name and default, from src/node/settings.ts; throws for a key that does not exist. */
function setting(section: string, key: string): { name: string; value: number } {
  const found = SETTINGS.find((s) => s.section === section && s.key === key);
  if (found === undefined) throw new Error(`no setting ${section}.${key} in src/node/settings.ts`);
  const value = found.get(DEFAULTS);
  if (typeof value !== "number") throw new Error(`${section}.${key} is not a number`);
  return { name: `\`${section}.${key}\``, value };
}

const RPC = {
  maxBodyBytes: setting("rpc", "max_body_bytes"),
  maxBatchItems: setting("rpc", "max_batch_items"),
  maxBlockRange: setting("rpc", "max_block_range"),
  maxResponseBytes: setting("rpc", "max_response_bytes"),
  maxBufferedBytes: setting("rpc", "max_buffered_bytes"),
  headersTimeoutMs: setting("rpc", "headers_timeout_ms"),
  requestTimeoutMs: setting("rpc", "request_timeout_ms"),
};
const POOL = {
  maxTxs: setting("pool", "max_txs"),
  maxTxsPerAccount: setting("pool", "max_txs_per_account"),
  replayWindowMs: setting("pool", "replay_window_ms"),
};

/** The method's own errors, then the common ones; one row per code and reason. */
function errorsOf(name: string): MethodErrorDoc[] {
  const rows: MethodErrorDoc[] = [];
  const own = METHOD_LIST.find((m) => m.name === name)?.spec.errors ?? [];
  for (const doc of [...own, ...COMMON_ERRORS]) {
    const same = rows.findIndex((row) => row.code === doc.code && row.reason === doc.reason);
    const existing = rows[same];
    if (existing === undefined) rows.push(doc);
    else rows[same] = { ...existing, detail: `${existing.detail} Or: ${doc.detail}` };
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Examples: two real dev nodes, real transactions, every method called over HTTP.

interface Exchange {
  method: string;
  /** The request body as sent (an object, or an array for a batch). */
  request: unknown;
  response: unknown;
}

interface Captured {
  /** One successful exchange per method. */
  examples: Map<string, Exchange>;
  /** A rejected chain_sendSignedTransaction. */
  rejection: Exchange;
  /** A JSON-RPC batch with a notification in it. */
  batch: Exchange;
}

let nextRequestId = 1;

async function exchange(node: TestNode, method: string, params?: unknown): Promise<Exchange> {
  const request: Record<string, unknown> = { jsonrpc: "2.0", id: nextRequestId++, method };
  if (params !== undefined) request.params = params;
  const reply = await node.post(JSON.stringify(request));
  if (reply.status !== 200) throw new Error(`${method}: HTTP ${reply.status}: ${reply.text}`);
  return { method, request, response: reply.json };
}

function resultOf(ex: Exchange): unknown {
  const response = mustObject(ex.response, "a JSON-RPC response");
  if (response.error !== undefined || !("result" in response)) {
    throw new Error(`${ex.method} failed: ${JSON.stringify(response)}`);
  }
  return response.result;
}

function account(node: TestNode, index: number): DerivedAccount {
  const found = node.accounts[index];
  if (found === undefined) throw new Error(`dev account ${index} is missing`);
  return found;
}

const committed = (node: TestNode, hash: string) =>
  waitFor(`transaction ${hash} to be committed`, async () => {
    const tx = asObject(await node.result("chain_getTransactionByHash", { hash }));
    return typeof tx?.block_number === "number" ? tx : undefined;
  });

/** Node A: a transfer, then a batch (a /users write and a second transfer) in one block; then every read. */
async function captureFromBusyNode(
  examples: Map<string, Exchange>,
): Promise<{ rejection: Exchange; batch: Exchange }> {
  const node = await startTestNode();
  try {
    const validator = account(node, 0);
    const alice = account(node, 1);
    const bob = account(node, 2);

    const record = async (method: string, params?: unknown): Promise<unknown> => {
      const ex = await exchange(node, method, params);
      examples.set(method, ex);
      return resultOf(ex);
    };

    const transfer = signTx(alice.privateKey, transferBody(alice.address, bob.address, 500, 0, "payment-1"));
    const firstHash = String(await record("chain_sendSignedTransaction", transfer));
    await committed(node, firstHash);

    const profile = signTx(alice.privateKey, {
      nonce: 1,
      parent_tx_hash: firstHash,
      operation: {
        type: "SET_VALUE",
        ref: `/users/${alice.address}/profile`,
        value: { name: "Alice", languages: ["en", "fr"] },
      },
    });
    const second = signTx(alice.privateKey, transferBody(alice.address, bob.address, 250, 2, "payment-2"));
    const batchHashes = await record("chain_sendSignedTransactionBatch", { tx_list: [profile, second] });
    if (!Array.isArray(batchHashes)) throw new Error("chain_sendSignedTransactionBatch returned no list");
    for (const hash of batchHashes) await committed(node, String(hash));

    // A replay of nonce 0 (a new body, so not already_known): refused with the expected nonce.
    const replay = signTx(alice.privateKey, transferBody(alice.address, bob.address, 1, 0, "payment-3"));
    const rejection = await exchange(node, "chain_sendSignedTransaction", replay);
    const refusal = asObject(asObject(asObject(rejection.response)?.error)?.data);
    if (refusal?.reason !== "nonce_too_low") {
      throw new Error(`expected a nonce_too_low rejection, got ${JSON.stringify(rejection.response)}`);
    }

    const head = Number(await record("chain_getRecentBlockNumber"));
    await record("chain_getRecentBlock");
    const block = mustObject(
      await record("chain_getBlockByNumber", { number: head, getFullTransactions: true }),
      `block ${head}`,
    );
    if (!Array.isArray(block.transactions) || block.transactions.length !== 2) {
      throw new Error(`expected the batch's two transactions in block ${head}, got ${JSON.stringify(block)}`);
    }
    const blockHash = String(block.hash);
    await record("chain_getBlockByHash", { hash: blockHash, getFullTransactions: false });
    await record("chain_getBlocks", { from: 0, to: 1 });
    await record("chain_getBlockHeaders", { from: 0, to: head });
    await record("chain_getBlockTransactionCountByNumber", { number: head });
    await record("chain_getBlockTransactionCountByHash", { hash: blockHash });
    await record("chain_getProposerByHash", { hash: blockHash });
    await record("chain_getProposerByNumber", { number: head });
    await record("chain_getValidatorsByHash", { hash: blockHash });
    await record("chain_getValidatorsByNumber", { number: head });
    await record("chain_getTransactionByBlockNumberAndIndex", { block_number: head, index: 1 });
    await record("chain_getTransactionByBlockHashAndIndex", { block_hash: blockHash, index: 0 });
    await record("chain_getTransactionByHash", { hash: firstHash });
    // Alice's three transactions, two to a page: the first page and its cursor.
    await record("chain_getTransactionsByAddress", { address: alice.address, limit: 2 });
    await record("chain_getBalance", { address: bob.address });
    await record("chain_getConsensusStakeAmount", { address: validator.address });
    await record("chain_getNonce", { address: alice.address });
    await record("chain_isValidator", { address: validator.address });
    await record("chain_getValue", { ref: `/users/${alice.address}/profile` });
    await record("chain_getProof", { ref: `/users/${alice.address}/profile/name`, block_number: head });
    for (const method of [
      "net_listening",
      "net_nodeInfo",
      "net_peerCount",
      "net_syncing",
      "net_id",
      "net_chainId",
    ]) {
      await record(method);
    }
    await record(DISCOVER_METHOD);

    const batchRequest = [
      { jsonrpc: "2.0", id: nextRequestId++, method: "chain_getRecentBlockNumber" },
      { jsonrpc: "2.0", id: nextRequestId++, method: "chain_getNonce", params: { address: alice.address } },
      { jsonrpc: "2.0", method: "net_peerCount" },
    ];
    const reply = await node.post(JSON.stringify(batchRequest));
    if (reply.status !== 200) throw new Error(`batch: HTTP ${reply.status}: ${reply.text}`);
    return { rejection, batch: { method: "(batch)", request: batchRequest, response: reply.json } };
  } finally {
    await node.stop();
  }
}

/**
 * Node B, with a 60 s block time: its first transaction commits at once (the genesis block is
 * old), so the next ones wait in the pool for the rest of the minute.
 */
async function capturePendingList(examples: Map<string, Exchange>): Promise<void> {
  const node = await startTestNode({ blockTimeMs: 60_000 });
  try {
    const alice = account(node, 1);
    const bob = account(node, 2);
    const first = await node.result<string>(
      "chain_sendSignedTransaction",
      signTx(alice.privateKey, transferBody(alice.address, bob.address, 100, 0, "payment-1")),
    );
    await committed(node, first);
    await node.result(
      "chain_sendSignedTransaction",
      signTx(alice.privateKey, {
        nonce: 1,
        operation: { type: "SET_VALUE", ref: `/users/${alice.address}/status`, value: "online" },
      }),
    );
    // An unordered transaction (nonce -1): no ordering, bound to the replay window.
    await node.result(
      "chain_sendSignedTransaction",
      signTx(bob.privateKey, transferBody(bob.address, alice.address, 40, -1, "tip-1")),
    );
    const ex = await exchange(node, "chain_getPendingTransactions");
    const pending = resultOf(ex);
    if (!Array.isArray(pending) || pending.length !== 2) {
      throw new Error(`expected two pending transactions, got ${JSON.stringify(pending)}`);
    }
    examples.set("chain_getPendingTransactions", ex);
  } finally {
    await node.stop();
  }
}

async function captureExamples(): Promise<Captured> {
  const examples = new Map<string, Exchange>();
  const { rejection, batch } = await captureFromBusyNode(examples);
  await capturePendingList(examples);
  return { examples, rejection, batch };
}

// ---------------------------------------------------------------------------------------------
// Data shapes: documented field by field, checked against the captured responses so a field the
// node starts returning cannot go undocumented (and a documented one cannot silently vanish).

interface FieldDoc {
  type: string;
  note: string;
  /** Not in the interface spec (spec/interface.md). */
  beyondSpec?: true;
  /** May be absent. */
  optional?: true;
}

interface Shape {
  title: string;
  anchor: string;
  intro: string;
  sample: JsonObject;
  fields: Record<string, FieldDoc>;
}

const TX_FIELDS: Record<string, FieldDoc> = {
  hash: {
    type: "String",
    note: "`0x` + keccak256(keccak256(canonical JSON of the signed body)): 32 bytes.",
  },
  address: { type: "String", note: "The sender, recovered from the signature (EIP-55 checksummed)." },
  signature: { type: "String", note: "97 bytes: hash ‖ r ‖ s ‖ v, lower-case hex." },
  timestamp: { type: "Number", note: "Set by the sender: ms since the Unix epoch." },
  nonce: { type: "Number", note: "The sender's sequence number from 0; -1 marks an unordered transaction." },
  parent_tx_hash: {
    type: "String",
    note: "Only when the sender signed one: carried as signed, not interpreted by the node.",
    optional: true,
  },
  operation: {
    type: "Object",
    note: '`{type: "SET_VALUE", ref, value}` (see [Transactions](#transactions)).',
  },
};

const BLOCK_FIELDS: Record<string, FieldDoc> = {
  timestamp: { type: "Number", note: "Creation time, ms since the Unix epoch (at least the parent's + 1)." },
  hash: {
    type: "String",
    note: "`0x` + keccak256 of the canonical JSON (keys sorted, no whitespace) of the header: `parent_hash`, `number`, `timestamp`, `proposer`, `transactions_hash`, `state_root`, `last_commit_hash`, `size`.",
  },
  parent_hash: { type: "String", note: 'Hash of the previous block; `""` for block 0.' },
  number: { type: "Number", note: "Block number; block 0 is the genesis block." },
  proposer: {
    type: "String",
    note: `Address of the validator that proposed the block; \`${GENESIS_PROPOSER}\` for block 0.`,
  },
  validators: {
    type: "Array of String",
    note: "Sorted addresses whose precommit votes finalized the block (block 0: the genesis validators).",
  },
  size: { type: "Number", note: "Bytes: length of the canonical JSON of the block's transaction list." },
  transactions_hash: {
    type: "String",
    note: "keccak256 of the concatenated 32-byte transaction hashes, in block order.",
    beyondSpec: true,
  },
  state_root: { type: "String", note: "Merkle root of the state after this block.", beyondSpec: true },
  last_commit_hash: {
    type: "String",
    note: 'keccak256 of the canonical JSON of the previous block\'s commit certificate; `""` for blocks 0 and 1 (block 0 has no certificate).',
    beyondSpec: true,
  },
  transactions: {
    type: "Array",
    note: "[Transactions](#transaction-in-a-block) in block order, or their hashes only (see each method).",
  },
};

const { transactions: _transactions, ...HEADER_FIELDS } = BLOCK_FIELDS;

const CONFIRMED_FIELDS: Record<string, FieldDoc> = {
  ...TX_FIELDS,
  block_hash: { type: "String", note: "Hash of the block holding the transaction." },
  block_number: { type: "Number", note: "Number of that block." },
  index: { type: "Number", note: "Position in that block, from 0." },
  result: {
    type: "Object",
    note: "The execution outcome (see [Transaction result](#transaction-result)).",
    beyondSpec: true,
  },
};

const { operation: _operation, ...PENDING_TX_FIELDS } = TX_FIELDS;
const PENDING_FIELDS: Record<string, FieldDoc> = {
  status: { type: "String", note: "Always `PENDING`." },
  ...PENDING_TX_FIELDS,
};

const NODE_INFO_FIELDS: Record<string, FieldDoc> = {
  name: { type: "String", note: "From config `node.name` (default: the host name)." },
  location: { type: "String", note: 'From config `node.location` (default `""`).' },
  version: { type: "String", note: "The chain-node package version." },
};

function shapes(examples: ReadonlyMap<string, Exchange>): Shape[] {
  const result = (method: string): unknown => {
    const ex = examples.get(method);
    if (ex === undefined) throw new Error(`no example of ${method} to take a sample from`);
    return resultOf(ex);
  };
  const first = (value: unknown, what: string): JsonObject => {
    if (!Array.isArray(value) || value.length === 0) throw new Error(`expected a non-empty list of ${what}`);
    return mustObject(value[0], what);
  };
  const block = mustObject(result("chain_getBlockByNumber"), "a block");
  const headers = result("chain_getBlockHeaders");
  return [
    {
      title: "Block",
      anchor: "block",
      intro: "Returned by the block methods.",
      sample: block,
      fields: BLOCK_FIELDS,
    },
    {
      title: "Block header",
      anchor: "block-header",
      intro: "A block without `transactions` (`chain_getBlockHeaders`).",
      sample: first(Array.isArray(headers) ? headers.slice(-1) : headers, "block headers"),
      fields: HEADER_FIELDS,
    },
    {
      title: "Transaction in a block",
      anchor: "transaction-in-a-block",
      intro: "An entry of a block's `transactions` when full transactions are asked for.",
      sample: first(block.transactions, "block transactions"),
      fields: TX_FIELDS,
    },
    {
      title: "Confirmed transaction",
      anchor: "confirmed-transaction",
      intro:
        "A committed transaction fetched by hash or by block and index: the transaction plus where it is and how it executed.",
      sample: mustObject(result("chain_getTransactionByBlockHashAndIndex"), "a confirmed transaction"),
      fields: CONFIRMED_FIELDS,
    },
    {
      title: "Pending transaction",
      anchor: "pending-transaction",
      intro:
        "An entry of `chain_getPendingTransactions`: no `operation` (spec §2). `chain_getTransactionByHash` of a pending transaction returns the same members plus `operation`.",
      sample: first(result("chain_getPendingTransactions"), "pending transactions"),
      fields: PENDING_FIELDS,
    },
    {
      title: "Node information",
      anchor: "node-information",
      intro: "The result of `net_nodeInfo`.",
      sample: mustObject(result("net_nodeInfo"), "node information"),
      fields: NODE_INFO_FIELDS,
    },
  ];
}

function renderShape(shape: Shape): string {
  const present = Object.keys(shape.sample);
  for (const key of present) {
    if (shape.fields[key] === undefined) {
      throw new Error(`${shape.title}: the node returns "${key}", which this generator does not document`);
    }
  }
  const absent = Object.entries(shape.fields)
    .filter(([key, doc]) => !present.includes(key) && doc.optional !== true)
    .map(([key]) => key);
  if (absent.length > 0) throw new Error(`${shape.title}: documented but not returned: ${absent.join(", ")}`);
  // Members in the order the node returns them; optional ones missing from the sample last.
  const order = [...present, ...Object.keys(shape.fields).filter((key) => !present.includes(key))];
  const rows = order.map((key) => {
    const doc = shape.fields[key] as FieldDoc;
    const name = doc.beyondSpec === true ? `\`${key}\` ¹` : `\`${key}\``;
    const type = doc.optional === true ? `${doc.type} (optional)` : doc.type;
    return `| ${name} | ${cell(type)} | ${cell(doc.note)} |`;
  });
  return [
    `### ${shape.title}`,
    "",
    shape.intro,
    "",
    "| Member | Type | Meaning |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------------------------
// Markdown.

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

function bytes(n: number): string {
  const MIB = 1024 * 1024;
  if (n % MIB === 0) return `${n / MIB} MiB (${n} bytes)`;
  if (n % 1024 === 0) return `${n / 1024} KiB (${n} bytes)`;
  return `${n} bytes`;
}

const json = (value: unknown): string => ["```json", JSON.stringify(value, null, 2), "```"].join("\n");

const codeCell = (doc: MethodErrorDoc): string => `${doc.code}`;
const reasonCell = (doc: MethodErrorDoc): string => (doc.reason === undefined ? "—" : `\`${doc.reason}\``);

function renderParams(method: DocumentedMethod): string {
  const schema = mustObject(method.spec.params, `params schema of ${method.name}`);
  const rows = paramRows(schema);
  if (rows.length === 0) {
    return "**Params:** none. Omit `params` or send `{}`; any member is refused with -32602.";
  }
  return [
    "**Params:** an object with these named members (unknown members are refused with -32602).",
    "",
    "| Member | Type | Required | Constraints |",
    "|---|---|---|---|",
    ...rows.map(
      (row) => `| \`${row.member}\` | ${row.type} | ${row.required ? "yes" : "no"} | ${cell(row.notes)} |`,
    ),
    "",
    "<details><summary>Params JSON Schema</summary>",
    "",
    json(schema),
    "",
    "</details>",
  ].join("\n");
}

function renderErrors(name: string): string {
  return [
    "**Errors:**",
    "",
    "| Code | data.reason | When |",
    "|---|---|---|",
    ...errorsOf(name).map((doc) => `| ${codeCell(doc)} | ${reasonCell(doc)} | ${cell(doc.detail)} |`),
  ].join("\n");
}

/** GitHub's heading anchor: lower case, dots dropped (rpc.discover → #rpcdiscover). */
const anchorOf = (name: string): string => name.toLowerCase().replaceAll(".", "");

/** The OpenRPC document is long: its example keeps the first method and says how many there are. */
function abbreviatedDiscovery(ex: Exchange): { exchange: Exchange; note: string } {
  const response = mustObject(ex.response, "the rpc.discover response");
  const document = mustObject(response.result, "the OpenRPC document");
  const methods = Array.isArray(document.methods) ? document.methods : [];
  return {
    exchange: { ...ex, response: { ...response, result: { ...document, methods: methods.slice(0, 1) } } },
    note: `The response below is cut to the first of its ${methods.length} methods; each method has \`params\` (by name, with the JSON Schema that validates them), a \`result\` schema and its \`errors\`.`,
  };
}

function renderExample(title: string, ex: Exchange): string {
  return [`**${title}:**`, "", json(ex.request), "", json(ex.response)].join("\n");
}

function renderMethod(method: DocumentedMethod, captured: Captured): string {
  const captive = captured.examples.get(method.name);
  if (captive === undefined) throw new Error(`no example was captured for ${method.name}`);
  const discovery = method.name === DISCOVER_METHOD ? abbreviatedDiscovery(captive) : undefined;
  const example = discovery?.exchange ?? captive;
  const parts = [
    `### ${method.name}`,
    "",
    method.spec.summary,
    "",
    renderParams(method),
    "",
    `**Result:** \`${method.spec.result}\`${resultLink(method.spec.result)}`,
    "",
    renderErrors(method.name),
    "",
    ...(EXAMPLE_NOTES[method.name] === undefined ? [] : [EXAMPLE_NOTES[method.name] as string, ""]),
    ...(discovery === undefined ? [] : [discovery.note, ""]),
    renderExample("Example", example),
  ];
  if (method.name === "chain_sendSignedTransaction") {
    parts.push("", renderExample("Error example (a second transaction with nonce 0)", captured.rejection));
  }
  parts.push("");
  return parts.join("\n");
}

/** How an example was obtained, where that is not obvious from the request. */
const EXAMPLE_NOTES: Readonly<Record<string, string>> = {
  chain_getPendingTransactions:
    "Captured on a second dev node with a 60 s block time: its first transaction committed at once, and the next two (an ordered one and an unordered one, nonce -1) were still waiting for the next block.",
};

const RESULT_LINKS: Readonly<Record<string, string>> = {
  Block: "#block",
  BlockHeader: "#block-header",
  Transaction: "#confirmed-transaction",
  PendingTransaction: "#pending-transaction",
  NodeInfo: "#node-information",
};

function resultLink(result: string): string {
  const links = Object.entries(RESULT_LINKS)
    .filter(([type]) => new RegExp(`\\b${type}\\b`).test(result))
    .map(([type, anchor]) => `[${type}](${anchor})`);
  return links.length === 0 ? "" : ` (see ${links.join(", ")})`;
}

// ---------------------------------------------------------------------------------------------
// The document.

function renderErrorTable(): string {
  const names = METHOD_LIST.map((m) => m.name);
  const methodsRaising = (code: number, reason: string | undefined): string => {
    const raising = names.filter((name) =>
      errorsOf(name).some((doc) => doc.code === code && doc.reason === reason),
    );
    if (raising.length === names.length) return "every method";
    return raising.map((name) => `\`${name}\``).join(", ");
  };
  const rows: [number, string | undefined, string, string][] = [
    [C.parseError, undefined, "The body is not valid JSON (the reply has `id: null`).", "— (transport)"],
    [
      C.invalidRequest,
      "invalid_request",
      "Not a JSON-RPC 2.0 request object; an empty batch.",
      "— (transport)",
    ],
    [
      C.invalidRequest,
      "batch_too_large",
      `A JSON-RPC batch of more than ${RPC.maxBatchItems.value} requests (transport); a \`tx_list\` of more than ${RPC.maxBatchItems.value} entries.`,
      methodsRaising(C.invalidRequest, "batch_too_large"),
    ],
    [C.methodNotFound, undefined, "Unknown method.", "— (transport)"],
    [
      C.invalidParams,
      "invalid_params",
      "Missing, unknown or mistyped params, malformed hex, negative or non-integer numbers (`data.path`); `from > to`.",
      methodsRaising(C.invalidParams, "invalid_params"),
    ],
    [
      C.internalError,
      undefined,
      "An internal fault (`data.fault_id`, logged with the stack); the node keeps serving.",
      methodsRaising(C.internalError, undefined),
    ],
    ...TX_REJECT_REASONS.map((reason): [number, string, string, string] => [
      C.txRejected,
      reason,
      TX_REJECT_REASON_DETAILS[reason],
      methodsRaising(C.txRejected, reason),
    ]),
    [
      C.limitExceeded,
      "range_too_large",
      `More than ${RPC.maxBlockRange.value} blocks asked for.`,
      methodsRaising(C.limitExceeded, "range_too_large"),
    ],
    [
      C.limitExceeded,
      "response_too_large",
      `A result over ${bytes(RPC.maxResponseBytes.value)}.`,
      methodsRaising(C.limitExceeded, "response_too_large"),
    ],
    [
      C.limitExceeded,
      "body_too_large",
      `A request body over ${bytes(RPC.maxBodyBytes.value)} (with HTTP 413).`,
      "— (transport)",
    ],
  ];
  return [
    "| Code | data.reason | When | Methods |",
    "|---|---|---|---|",
    ...rows.map(
      ([code, reason, when, methods]) =>
        `| ${code} | ${reason === undefined ? "—" : `\`${reason}\``} | ${cell(when)} | ${cell(methods)} |`,
    ),
  ].join("\n");
}

function renderLimits(): string {
  const rows: [string, string, string, string][] = [
    [
      "HTTP request body",
      bytes(RPC.maxBodyBytes.value),
      RPC.maxBodyBytes.name,
      "HTTP 413, -32005 `body_too_large`",
    ],
    [
      "Requests in a JSON-RPC batch",
      String(RPC.maxBatchItems.value),
      RPC.maxBatchItems.name,
      "-32600 `batch_too_large`",
    ],
    [
      "Entries of `tx_list` (`chain_sendSignedTransactionBatch`)",
      String(RPC.maxBatchItems.value),
      RPC.maxBatchItems.name,
      "-32600 `batch_too_large`",
    ],
    [
      "`chain_getBlocks` / `chain_getBlockHeaders` range (inclusive `from`..`to`)",
      `${RPC.maxBlockRange.value} blocks`,
      RPC.maxBlockRange.name,
      "-32005 `range_too_large`",
    ],
    [
      "Serialized result of one call, and the results of one batch together",
      bytes(RPC.maxResponseBytes.value),
      RPC.maxResponseBytes.name,
      "-32005 `response_too_large` (in a batch: the calls past the budget, which do not run)",
    ],
    [
      "Time to send the request head / the whole request",
      `${RPC.headersTimeoutMs.value / 1000} s / ${RPC.requestTimeoutMs.value / 1000} s`,
      `${RPC.headersTimeoutMs.name}, ${RPC.requestTimeoutMs.name}`,
      "HTTP 408, connection closed",
    ],
    [
      "Reply bytes held for clients that do not read (all connections)",
      bytes(RPC.maxBufferedBytes.value),
      RPC.maxBufferedBytes.name,
      "the connections that fell behind first are closed",
    ],
    [
      "Transaction size (canonical JSON of the body)",
      bytes(GENESIS.consensus.max_tx_bytes),
      "genesis `consensus.max_tx_bytes`",
      "-32003 `tx_too_large`",
    ],
    ["Pending transactions in the pool", String(POOL.maxTxs.value), POOL.maxTxs.name, "-32003 `pool_full`"],
    [
      "Pending transactions of one sender",
      String(POOL.maxTxsPerAccount.value),
      POOL.maxTxsPerAccount.name,
      "-32003 `account_pool_full`",
    ],
    [
      "Unordered replay window (nonce -1)",
      `± ${POOL.replayWindowMs.value / 60_000} min (${POOL.replayWindowMs.value} ms) of the node's clock`,
      POOL.replayWindowMs.name,
      "-32003 `stale_timestamp`",
    ],
  ];
  return [
    "| Limit | Default | Setting | When exceeded |",
    "|---|---|---|---|",
    ...rows.map((row) => `| ${row.map(cell).join(" | ")} |`),
  ].join("\n");
}

function renderDocument(captured: Captured): string {
  const names = METHOD_LIST.map((m) => m.name);
  for (const name of Object.keys(EXAMPLE_NOTES)) {
    if (!names.includes(name)) throw new Error(`the generator names ${name}, which is not a method`);
  }
  const script = relative(ROOT, fileURLToPath(import.meta.url));
  const execCodes = Object.entries(EXEC_FAILURE_CODES)
    .map(([reason, code]) => `\`{code: ${code}, reason: "${reason}"}\``)
    .join(", ");
  const sections: string[] = [
    "# chain-node JSON-RPC reference",
    "",
    `<!-- Generated by ${script} from src/rpc (the method table, TypeBox schemas, error codes) and`,
    "     examples captured from a real dev node. Do not edit by hand: change the code, then run",
    "     npm run docs:rpc -->",
    "",
    "This reference is generated from the method table in `src/rpc/routes.ts` and its TypeBox",
    "schemas; every example is a real request and response, captured from an in-process dev node",
    "(chain id 100, network id 1) over HTTP when the document was generated. Hashes, signatures and",
    "timestamps in the examples therefore differ from one generation to the next.",
    "",
    "**WebSocket:** the same methods are served over a WebSocket at `/ws`, which adds",
    "`chain_subscribe` and `chain_unsubscribe` (new blocks, pending transactions, one transaction's",
    "status until committed); those two are described in [websocket.md](websocket.md), not here.",
    "",
    "## Contents",
    "",
    "- [Transport](#transport)",
    "- [Conventions](#conventions)",
    "- [Beyond the interface spec](#beyond-the-interface-spec)",
    "- [Data shapes](#data-shapes)",
    "- [Transactions](#transactions)",
    "- [Errors](#errors)",
    "- [Limits](#limits)",
    "- [Methods](#methods)",
    ...names.map((name) => `  - [${name}](#${anchorOf(name)})`),
    "",
    "## Transport",
    "",
    "- JSON-RPC 2.0 over HTTP `POST` to `/` or `/json-rpc` (a trailing slash is allowed). The body is",
    "  JSON; send `Content-Type: application/json` (any `application/*+json` type is accepted too, and",
    "  a missing content type is tolerated). Replies are `application/json`.",
    '- A request is `{"jsonrpc": "2.0", "id": …, "method": …, "params": {…}}`. `params` is an object',
    "  of named members, never an array; for a method without params omit it or send `{}`. `id` is",
    "  a number, a string or null and is echoed in the reply.",
    "- A reply carries `result` or `error` (`{code, message, data?}`, with `data.reason` a stable",
    "  string). Bad input never gets HTTP 500, an HTML page, or a successful result carrying an error.",
    `- **Batches:** a JSON array of up to ${RPC.maxBatchItems.value} requests is answered with an array of replies`,
    "  (calls start in the order written). An empty batch is a single -32600 error; a longer one is",
    "  one -32600 `batch_too_large` error.",
    "- **Notifications:** a request without `id` is executed but gets no reply entry; a request or",
    "  batch made only of notifications gets HTTP 204 with an empty body.",
    "- **HTTP statuses:** 200 for every JSON-RPC reply (errors included, and -32700 for a body that",
    `  is not JSON); 204 as above; 413 for a body over ${bytes(RPC.maxBodyBytes.value)}; 415 for a content type`,
    "  that is not JSON; 405 for methods other than POST and OPTIONS, with `Allow: POST, OPTIONS` (on",
    "  `/`, which also answers `GET` with a short page linking the explorer: `Allow: GET, POST, OPTIONS`); `OPTIONS`",
    "  gets 204 with the same `Allow`; 404 for any other path. The",
    "  4xx replies carry a JSON-RPC error body with `id: null`.",
    "- The node binds RPC to 127.0.0.1 unless configured otherwise; CORS headers are sent only when",
    "  enabled (`rpc.cors`, on in dev mode): then every reply carries `Access-Control-Allow-Origin: *`,",
    "  and the answer to a preflight (`OPTIONS`) adds `Access-Control-Allow-Methods: POST, OPTIONS`,",
    "  `Access-Control-Allow-Headers: Content-Type` and `Access-Control-Max-Age: 7200` (a browser asks",
    "  once per two hours, not before every call). The allow headers count only in a preflight's answer",
    "  (Fetch standard), so calls do not carry them.",
    "- **Discovery:** `rpc.discover` returns this API as an [OpenRPC](https://spec.open-rpc.org) 1.3",
    "  document, generated from the same schemas that validate requests and describe results.",
    "- Beside JSON-RPC, the port serves `GET /health`, `GET /ready` and (when enabled) `GET /metrics`:",
    "  see [monitoring](monitoring.md).",
    "",
    renderExample("A batch with a notification (the third request has no `id`)", captured.batch),
    "",
    "## Conventions",
    "",
    "- Hashes and addresses are `0x`-prefixed hex strings: hashes 32 bytes (64 digits), addresses",
    "  20 bytes (40 digits), signatures 97 bytes (194 digits). Addresses are accepted in any case and",
    "  returned EIP-55 checksummed; hashes are returned in lower case and looked up in any case.",
    "- Timestamps are milliseconds since the Unix epoch. Sizes are bytes.",
    "- Balances, stakes and amounts are JSON numbers: non-negative safe integers (≤ 2^53 − 1) in the",
    "  chain's smallest unit; there are no decimals.",
    "- Block numbers and indexes are integers from 0.",
    "- Not found is `result: null`, never an error (e.g. an unknown block number or transaction hash).",
    "- The network id (`net_id`) is 0 for the main network, 1 for a test network; the dev chain uses 1.",
    "",
    "## Beyond the interface spec",
    "",
    "What this node returns beyond `spec/interface.md` (marked ¹ in the shapes below):",
    "",
    "- Blocks and block headers carry `transactions_hash`, `state_root` and `last_commit_hash`, so",
    "  a client can recompute and check `hash`.",
    "- A confirmed transaction carries `result`: `{code: 0}` on success, or the failure of an",
    "  operation that passed admission but failed when executed (the transaction is still recorded",
    "  and consumes its nonce, but changes no state).",
    "- `net_chainId` returns the chain id transactions must be signed for: a client cannot sign",
    "  without it.",
    '- `chain_getTransactionByHash` also finds pending transactions (with `status: "PENDING"`).',
    "- The data tree can be read back and proven (DESIGN.md §12): `chain_getValue` reads the JSON",
    "  value at a path at the head or at any height the node keeps; `chain_getProof` returns it",
    "  with the trie nodes that prove it (or its absence) against that block's `state_root`: a",
    "  standard Ethereum Merkle proof (key `keccak256(utf8(ref))`, value `utf8(canonical JSON)`),",
    "  which `verifyProof` in `chain-node/client` and any Merkle-Patricia library check. For a",
    "  subtree each leaf comes with its own proof; those show each leaf is in the state, not that no",
    "  other leaf exists below the path (keys are hashed, so the trie cannot show completeness).",
    "",
    "## Data shapes",
    "",
    ...shapes(captured.examples).map(renderShape),
    "### Transaction result",
    "",
    `\`{code: 0}\` for success; otherwise one of ${execCodes}.`,
    "",
    "¹ Beyond the interface spec.",
    "",
    "## Transactions",
    "",
    "A submitted transaction is a body `{nonce, timestamp, operation, parent_tx_hash?}` (no other",
    "member) plus a `signature` beside it, in the format of AI Network's `@ainblockchain/ain-util`:",
    "",
    "- hash = `0x` + keccak256(keccak256(utf8(canonical JSON of the body))), canonical JSON having",
    "  keys sorted at every level and no whitespace;",
    "- signature = hash(32) ‖ r(32) ‖ s(32) ‖ v(1) as hex, with v = 27 + recid when the chain id is",
    "  0 and 35 + 2·chain_id + recid otherwise (so chain ids are 0..109); high-s is refused. The",
    "  sender is recovered from the signature; a body never names it.",
    "- nonce: an ordered transaction carries the sender's next nonce: `chain_getNonce` plus the",
    "  sender's ordered transactions already pending. -1 marks an unordered transaction: its",
    `  timestamp must lie within ± ${POOL.replayWindowMs.value / 60_000} min of the node's clock, and its hash can never be committed twice.`,
    "- Every check runs before the hash is returned (shape, size, signature, chain id, already known,",
    "  nonce, timestamp, pool room, and the operation's permission and balance against the pending",
    "  state). A refused transaction is not admitted and the error says why (-32003).",
    '- The only operation is `{type: "SET_VALUE", ref, value}`; `value: null` deletes. Who may',
    "  write where:",
    "",
    "| Path (`ref`) | Who may write | Effect |",
    "|---|---|---|",
    "| `/account/<addr>/…` | nobody | balance, nonce and stake are maintained by the node |",
    "| `/transfer/<from>/<to>/<key>/value` | `<from>`, once per key | a positive safe-integer amount moves from `<from>` to `<to>` |",
    "| `/staking/<addr>/<key>/value` | `<addr>`, once per key | a positive amount moves balance into stake; a negative one unstakes |",
    "| `/users/<addr>/…` | `<addr>` | free application data (any JSON) |",
    "| anything else | nobody | `permission_denied` |",
    "",
    "## Errors",
    "",
    "Errors are JSON-RPC error objects; `data.reason` is the stable, machine-readable part (the",
    "message is for people and may change). Transaction rejections may carry `data.expected` and",
    "`data.actual`; a rejection inside `chain_sendSignedTransactionBatch` carries `data.index`.",
    "",
    renderErrorTable(),
    "",
    "## Limits",
    "",
    "Defaults; each is configurable in the node home's `config.toml` (or genesis).",
    "",
    renderLimits(),
    "",
    "## Methods",
    "",
    "In the order of the method table (`METHODS` in src/rpc/routes.ts). Every method may also return -32602",
    "`invalid_params`, -32005 `response_too_large` and -32603; they are listed in each table.",
    "",
    ...METHOD_LIST.map((method) => renderMethod(method, captured)),
  ];
  return `${sections.join("\n").trimEnd()}\n`;
}

async function main(): Promise<void> {
  const captured = await captureExamples();
  const document = renderDocument(captured);
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, document);
  process.stdout.write(
    `wrote ${relative(ROOT, OUTPUT)}: ${METHOD_LIST.length} methods, ${document.length} characters\n`,
  );
}

await main();
