import ainUtil from "@ainblockchain/ain-util";
import fc from "fast-check";
import { createTarget, rpcResult, type RpcTarget } from "./rpcArbitraries.ts";
import { startFuzzTarget } from "./target.ts";

/**
 * Transaction fuzzing against the reference signer (DESIGN.md §3): valid transactions signed with
 * @ainblockchain/ain-util, then mutated (signature bit flips, truncation, high-s, other chain
 * ids, other signers, body bit flips, wrong types, extra and missing members), sent to
 * chain_sendSignedTransaction of a real node. The oracle is independent of the node's code:
 * accept ⇔ ain-util's ecVerifySig verifies the signature for the intended sender on this chain
 * ∧ the body is well-formed per DESIGN §3 (a predicate written here from the text) ∧ the state
 * admits it (permission per §4, nonce, replay window, not a duplicate), and the base
 * transactions are chosen so that state never decides otherwise: writes under the sender's own
 * /users subtree, unordered (nonce -1) with fresh timestamps, and a pool large enough never to
 * fill. Shared by test/rpc/txFuzz.test.ts and `npm run fuzz:rpc -- --tx`.
 */

export const CHAIN_ID = 100;
const REPLAY_WINDOW_MS = 60 * 60 * 1000;
/** Timestamps this close to the window's edge are not judged (the two clocks read a few ms apart). */
const WINDOW_MARGIN_MS = 60 * 1000;
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The node's pool is made this large, so pool_full / account_pool_full never decide. */
export const FUZZ_POOL = { maxPoolTxs: 1_000_000, maxPoolTxsPerAccount: 1_000_000 };

// ---- the independent oracle ---------------------------------------------------------------------------

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const hasExactly = (record: Record<string, unknown>, required: string[], optional: string[] = []): boolean =>
  required.every((key) => Object.hasOwn(record, key)) &&
  Object.keys(record).every((key) => required.includes(key) || optional.includes(key));

/**
 * DESIGN.md §3 (and §2 for the params object): params are exactly {signature, transaction};
 * the body is exactly {nonce, timestamp, operation, parent_tx_hash?} — "nothing else is allowed";
 * nonce is -1 or a non-negative integer; timestamp is a time in ms (a non-negative integer);
 * parent_tx_hash, when present, is a string; operation is §4's only kind, SET_VALUE
 * {type, ref, value} with a string path and a JSON value (null deletes).
 */
export function isWellFormed(params: unknown): boolean {
  if (!isPlainObject(params) || !hasExactly(params, ["signature", "transaction"])) return false;
  if (typeof params.signature !== "string") return false;
  const body = params.transaction;
  if (!isPlainObject(body) || !hasExactly(body, ["nonce", "timestamp", "operation"], ["parent_tx_hash"]))
    return false;
  const { nonce, timestamp, operation, parent_tx_hash } = body;
  if (!Number.isSafeInteger(nonce) || (nonce as number) < -1) return false;
  if (!Number.isSafeInteger(timestamp) || (timestamp as number) < 0) return false;
  if (parent_tx_hash !== undefined && typeof parent_tx_hash !== "string") return false;
  if (!isPlainObject(operation) || !hasExactly(operation, ["type", "ref", "value"])) return false;
  return operation.type === "SET_VALUE" && typeof operation.ref === "string" && operation.value !== undefined;
}

/** ain-util's own verdict: the signature is over this body, for this chain, by `sender`. */
export function referenceVerifies(body: unknown, signature: string, sender: string): boolean {
  try {
    return ainUtil.ecVerifySig(body as ainUtil.TransactionBody, signature, sender, CHAIN_ID) === true;
  } catch {
    return false; // ain-util throws on a v it cannot use or a point it cannot recover
  }
}

/**
 * DESIGN.md §4: only `<addr>` writes under /users/<addr>/ (addresses in any case; leading and
 * trailing slashes ignored). The node documents that path segments are non-empty and free of
 * control characters; the generators below never make a longer path than those limits allow.
 */
export function mayWrite(ref: string, sender: string): boolean {
  const segments = ref.replace(/^\/+/, "").replace(/\/+$/, "").split("/");
  const control = (segment: string) =>
    [...segment].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (segments.some((segment) => segment === "" || control(segment))) return false;
  return segments[0] === "users" && segments[1]?.toLowerCase() === sender.toLowerCase();
}

export type Verdict = { accept: boolean; why: string } | { accept: "undecided"; why: string };

/** What the node must do, from the oracle and the test's model of the sender's state. */
export function oracle(params: unknown, sender: string, model: SenderModel, now: number): Verdict {
  if (!isWellFormed(params)) return { accept: false, why: "body or params not well-formed (DESIGN §3)" };
  const { signature, transaction } = params as { signature: string; transaction: Record<string, unknown> };
  if (!referenceVerifies(transaction, signature, sender)) {
    return { accept: false, why: "ain-util does not verify the signature for the sender" };
  }
  const body = transaction as { nonce: number; timestamp: number; operation: { ref: string } };
  if (!mayWrite(body.operation.ref, sender)) return { accept: false, why: "no permission (DESIGN §4)" };
  const hash = `0x${ainUtil.hashTransaction(transaction as unknown as ainUtil.TransactionBody).toString("hex")}`;
  if (model.accepted.has(hash)) return { accept: false, why: "already known" };
  if (body.nonce === -1) {
    const skew = Math.abs(now - body.timestamp);
    if (Math.abs(skew - REPLAY_WINDOW_MS) < WINDOW_MARGIN_MS)
      return { accept: "undecided", why: "at the window's edge" };
    if (skew > REPLAY_WINDOW_MS) return { accept: false, why: "timestamp outside the replay window" };
  } else if (body.nonce !== (model.nextNonce.get(sender) ?? 0)) {
    return { accept: false, why: `nonce ${body.nonce}, next is ${model.nextNonce.get(sender) ?? 0}` };
  }
  return { accept: true, why: "well-formed, verified, permitted, fresh" };
}

/** What the test knows of each sender: its next ordered nonce and the hashes the node took. */
export interface SenderModel {
  nextNonce: Map<string, number>;
  accepted: Set<string>;
}

// ---- base transactions and mutations ---------------------------------------------------------------

export interface Signer {
  address: string;
  privateKey: Buffer;
}

const KEY_CHARS = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"];
const word = fc.array(fc.constantFrom(...KEY_CHARS), { minLength: 1, maxLength: 12 }).map((c) => c.join(""));
const scalar = fc.oneof(word, fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
/** /users data: any JSON whose object keys are plain words (object keys become path segments). */
const userValue = fc.oneof(
  scalar,
  fc.array(scalar, { maxLength: 4 }),
  fc.dictionary(word, scalar, { minKeys: 1, maxKeys: 4 }),
);

const hash32 = fc
  .string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 })
  .map((hex) => `0x${hex}`);

export interface Base {
  signer: number;
  key: string;
  value: unknown;
  timestampOffsetMs: number;
  parent?: string;
}

const baseArb = (signers: number): fc.Arbitrary<Base> =>
  fc
    .record({
      signer: fc.nat(signers - 1),
      key: word,
      value: userValue,
      timestampOffsetMs: fc.integer({ min: -30 * 60_000, max: 30 * 60_000 }),
      parent: fc.option(fc.oneof(hash32, word), { nil: undefined }),
    })
    .map(({ parent, ...rest }) => (parent === undefined ? rest : { ...rest, parent }));

/** A body member (or the params object's own members) that a mutation can aim at. */
const BODY_MEMBERS = ["nonce", "timestamp", "operation", "parent_tx_hash"] as const;
const OPERATION_MEMBERS = ["type", "ref", "value"] as const;

const WRONG_TYPES: Record<string, readonly unknown[]> = {
  nonce: ["-1", "0", -2, -1.5, 0.5, 2 ** 53, 1e300, null, true, [], {}],
  timestamp: [-1, 1.5, "1700000000000", 2 ** 53 + 2, null, false, [], {}],
  operation: [null, [], "SET_VALUE", 1, true],
  parent_tx_hash: [null, 1, true, [], {}],
  type: ["set_value", "SET_VALUE ", "", "DELETE", null, 1, []],
  ref: [null, 1, [], {}, true],
  signature: [null, 1, true, [], {}, "", "0x"],
  transaction: [null, [], "tx", 1, true],
};

export type Mutation =
  | { kind: "none" }
  | { kind: "sigBitFlip"; bit: number }
  | { kind: "sigTruncate"; keep: number }
  | { kind: "highS"; flipV: boolean }
  | { kind: "otherChain"; chainId: number }
  | { kind: "otherSigner"; offset: number }
  | {
      kind: "bodyBitFlip";
      target: "nonce" | "timestamp" | "type" | "refKey" | "parent" | "value";
      bit: number;
      at: number;
      resign: boolean;
    }
  | { kind: "wrongType"; member: string; pick: number; resign: boolean }
  | {
      kind: "extraMember";
      where: "params" | "body" | "operation";
      key: string;
      value: unknown;
      resign: boolean;
    }
  | { kind: "missingMember"; where: "params" | "body" | "operation"; member: string; resign: boolean }
  | { kind: "orderedNonce"; nonce: number }
  | { kind: "timestamp"; offsetMs: number };

export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Mutation>({ kind: "none" }) },
  { weight: 6, arbitrary: fc.nat(97 * 8 - 1).map((bit): Mutation => ({ kind: "sigBitFlip", bit })) },
  { weight: 2, arbitrary: fc.nat(193).map((keep): Mutation => ({ kind: "sigTruncate", keep })) },
  { weight: 2, arbitrary: fc.boolean().map((flipV): Mutation => ({ kind: "highS", flipV })) },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 0, max: 109 })
      .filter((c) => c !== CHAIN_ID)
      .map((chainId): Mutation => ({ kind: "otherChain", chainId })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 8 }).map((offset): Mutation => ({ kind: "otherSigner", offset })),
  },
  {
    weight: 8,
    arbitrary: fc
      .record({
        target: fc.constantFrom("nonce", "timestamp", "type", "refKey", "parent", "value"),
        bit: fc.nat(47),
        at: fc.nat(),
        resign: fc.boolean(),
      })
      .map((m): Mutation => ({ kind: "bodyBitFlip", ...m })),
  },
  {
    weight: 5,
    arbitrary: fc
      .record({ member: fc.constantFrom(...Object.keys(WRONG_TYPES)), pick: fc.nat(), resign: fc.boolean() })
      .map((m): Mutation => ({ kind: "wrongType", ...m })),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        where: fc.constantFrom("params", "body", "operation"),
        key: fc.oneof(
          fc.constantFrom("address", "hash", "signature", "chain_id", "extra", "Nonce", "__proto__"),
          word,
        ),
        value: fc.oneof(scalar, fc.constant({})),
        resign: fc.boolean(),
      })
      .map((m): Mutation => ({ kind: "extraMember", ...m })),
  },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.record({
          where: fc.constant("params" as const),
          member: fc.constantFrom("signature", "transaction"),
        }),
        fc.record({ where: fc.constant("body" as const), member: fc.constantFrom(...BODY_MEMBERS) }),
        fc.record({
          where: fc.constant("operation" as const),
          member: fc.constantFrom(...OPERATION_MEMBERS),
        }),
      )
      .chain((m) => fc.boolean().map((resign): Mutation => ({ kind: "missingMember", ...m, resign }))),
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 3 }).map((nonce): Mutation => ({ kind: "orderedNonce", nonce })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.integer({ min: -3 * 3_600_000, max: 3 * 3_600_000 }),
        fc.constantFrom(-1_700_000_000_000, 10 * 365 * 86_400_000),
      )
      .map((offsetMs): Mutation => ({ kind: "timestamp", offsetMs })),
  },
);

const sign = (body: unknown, signer: Signer, chainId = CHAIN_ID): string =>
  ainUtil.ecSignTransaction(body as ainUtil.TransactionBody, signer.privateKey, chainId);

/** Flips bit `bit` of an integer in 64-bit two's complement. */
const flipIntegerBit = (n: number, bit: number): number =>
  Number(BigInt.asIntN(64, BigInt(n) ^ (1n << BigInt(bit))));

/**
 * Flips one bit of one character. In a path key the result must stay a path character (not a
 * control character or a slash: DESIGN leaves segment syntax to the node, and this test is not
 * about it), so such a flip moves to bit 7 (a Latin-1 letter or sign).
 */
function flipCharBit(text: string, at: number, bit: number, pathSafe: boolean): string {
  if (text.length === 0) return "x";
  const index = at % text.length;
  const code = text.charCodeAt(index);
  let flipped = code ^ (1 << (bit % 7));
  if (pathSafe && (flipped < 0x20 || flipped === 0x7f || flipped === 0x2f)) flipped = code ^ 0x80;
  return `${text.slice(0, index)}${String.fromCharCode(flipped)}${text.slice(index + 1)}`;
}

const clone = <T>(value: T): T => structuredClone(value);

/** Applies a mutation to a freshly signed base; returns the params to send. */
export function applyMutation(
  params: { signature: string; transaction: Record<string, unknown> },
  mutation: Mutation,
  signer: Signer,
  signers: readonly Signer[],
): Record<string, unknown> {
  const body = clone(params.transaction);
  const operation = body.operation as Record<string, unknown>;
  const withBody = (resign: boolean): Record<string, unknown> => ({
    signature: resign ? sign(body, signer) : params.signature,
    transaction: body,
  });
  const sigBytes = () => Buffer.from(params.signature.slice(2), "hex");
  switch (mutation.kind) {
    case "none":
      return { ...params };
    case "sigBitFlip": {
      const bytes = sigBytes();
      bytes[mutation.bit >> 3] = (bytes[mutation.bit >> 3] as number) ^ (1 << (mutation.bit & 7));
      return { signature: `0x${bytes.toString("hex")}`, transaction: body };
    }
    case "sigTruncate":
      return { signature: params.signature.slice(0, 2 + mutation.keep), transaction: body };
    case "highS": {
      const bytes = sigBytes();
      const s = BigInt(`0x${bytes.subarray(64, 96).toString("hex")}`);
      Buffer.from((SECP256K1_N - s).toString(16).padStart(64, "0"), "hex").copy(bytes, 64);
      if (mutation.flipV) bytes[96] = (bytes[96] as number) ^ 1;
      return { signature: `0x${bytes.toString("hex")}`, transaction: body };
    }
    case "otherChain":
      return { signature: sign(body, signer, mutation.chainId), transaction: body };
    case "otherSigner": {
      const index = signers.indexOf(signer);
      const other = signers[(index + mutation.offset) % signers.length] as Signer;
      return { signature: sign(body, other), transaction: body };
    }
    case "bodyBitFlip": {
      const { target, bit, at } = mutation;
      if (target === "nonce") body.nonce = flipIntegerBit(body.nonce as number, bit);
      else if (target === "timestamp") body.timestamp = flipIntegerBit(body.timestamp as number, bit);
      else if (target === "type") operation.type = flipCharBit(operation.type as string, at, bit, false);
      else if (target === "parent") {
        body.parent_tx_hash = flipCharBit((body.parent_tx_hash as string | undefined) ?? "x", at, bit, false);
      } else if (target === "value") {
        operation.value =
          typeof operation.value === "string"
            ? flipCharBit(operation.value, at, bit, false)
            : typeof operation.value === "number"
              ? flipIntegerBit(operation.value, bit % 53)
              : JSON.stringify(operation.value);
      } else {
        // only the last segment (the key): the address part is the permission's business
        const ref = operation.ref as string;
        const cut = ref.lastIndexOf("/") + 1;
        operation.ref = `${ref.slice(0, cut)}${flipCharBit(ref.slice(cut), at, bit, true)}`;
      }
      return withBody(mutation.resign);
    }
    case "wrongType": {
      const values = WRONG_TYPES[mutation.member] as readonly unknown[];
      const value = clone(values[mutation.pick % values.length]);
      if (mutation.member === "signature") return { signature: value, transaction: body };
      if (mutation.member === "transaction") return { signature: params.signature, transaction: value };
      if (mutation.member === "type" || mutation.member === "ref") operation[mutation.member] = value;
      else body[mutation.member] = value;
      return withBody(mutation.resign);
    }
    case "extraMember": {
      const { where, key, value } = mutation;
      const define = (record: Record<string, unknown>) =>
        Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
      if (where === "params") return define({ ...withBody(false) });
      if (Object.hasOwn(where === "body" ? body : operation, key)) return withBody(mutation.resign); // not extra
      define(where === "body" ? body : operation);
      return withBody(mutation.resign);
    }
    case "missingMember": {
      const { where, member } = mutation;
      if (where === "params") {
        const out = withBody(false);
        delete out[member];
        return out;
      }
      delete (where === "body" ? body : operation)[member];
      return withBody(mutation.resign);
    }
    case "orderedNonce":
      body.nonce = mutation.nonce;
      return withBody(true);
    case "timestamp":
      body.timestamp = (body.timestamp as number) + mutation.offsetMs;
      return withBody(true);
  }
}

// ---- the run ------------------------------------------------------------------------------------------------

export interface TxFuzzStats {
  sent: number;
  accepted: number;
  rejected: number;
  undecided: number;
  byKind: Record<string, { sent: number; accepted: number }>;
  reasons: Record<string, number>;
  seconds: number;
  /** Of which waiting for the node's replies. */
  httpSeconds: number;
}

export interface TxFuzzContext {
  target: RpcTarget;
  signers: Signer[];
  model: SenderModel;
  stats: TxFuzzStats;
  counter: number;
}

export async function createTxFuzzContext(
  url: string,
  privateKeys: readonly string[],
): Promise<TxFuzzContext> {
  const target = createTarget(url);
  const signers = privateKeys.map((key) => {
    const privateKey = Buffer.from(key.slice(2), "hex");
    return { privateKey, address: ainUtil.toChecksumAddress(ainUtil.privateToAddress(privateKey)) };
  });
  const nextNonce = new Map<string, number>();
  for (const signer of signers) {
    nextNonce.set(
      signer.address,
      await rpcResult<number>(target, "chain_getNonce", { address: signer.address }),
    );
  }
  return {
    target,
    signers,
    model: { nextNonce, accepted: new Set() },
    stats: {
      sent: 0,
      accepted: 0,
      rejected: 0,
      undecided: 0,
      byKind: {},
      reasons: {},
      seconds: 0,
      httpSeconds: 0,
    },
    counter: 0,
  };
}

interface Reply {
  result?: unknown;
  error?: { code: number; message: string; data?: { reason?: string } };
}

/** Mutations per property run: sent together, so one transaction's durable journal write overlaps the next. */
export const GROUP = 6;

interface Prepared {
  signer: Signer;
  mutation: Mutation;
  params: Record<string, unknown>;
}

const isOrdered = ({ params }: Prepared): boolean => {
  const body = params.transaction;
  return isPlainObject(body) && typeof body.nonce === "number" && body.nonce >= 0;
};

/**
 * The property: a group of (base, mutation) pairs, each signed, mutated and sent; the node's
 * answer to each must match the oracle. Unordered ones go at once (their verdicts do not depend
 * on each other: each base has its own path); any with a nonce ≥ 0 go one by one after them, so
 * the nonce model sees them in the order the node does.
 */
export function txProperty(context: TxFuzzContext) {
  const { signers, model, stats, target } = context;
  const prepare = ([base, mutation]: [Base, Mutation]): Prepared => {
    const signer = signers[base.signer] as Signer;
    context.counter += 1;
    const body: Record<string, unknown> = {
      nonce: -1,
      timestamp: Date.now() + base.timestampOffsetMs,
      operation: {
        type: "SET_VALUE",
        ref: `/users/${signer.address}/fuzz/${process.pid}-${context.counter}-${base.key}`,
        value: base.value,
      },
    };
    if (base.parent !== undefined) body.parent_tx_hash = base.parent;
    const params = applyMutation(
      { signature: sign(body, signer), transaction: body },
      mutation,
      signer,
      signers,
    );
    return { signer, mutation, params };
  };
  const sendAndCheck = async ({ signer, mutation, params }: Prepared): Promise<void> => {
    const verdict = oracle(params, signer.address, model, Date.now());
    context.counter += 1;
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: context.counter,
      method: "chain_sendSignedTransaction",
      params,
    });
    const sentAt = performance.now();
    const http = await target.send(text);
    stats.httpSeconds += (performance.now() - sentAt) / 1000;
    const reply = JSON.parse(http.text) as Reply;
    const accepted = reply.result !== undefined;
    stats.sent += 1;
    const kind = stats.byKind[mutation.kind] ?? { sent: 0, accepted: 0 };
    stats.byKind[mutation.kind] = kind;
    kind.sent += 1;
    if (accepted) {
      stats.accepted += 1;
      kind.accepted += 1;
      model.accepted.add(reply.result as string);
      const { transaction } = params as { transaction: Record<string, unknown> };
      if ((transaction.nonce as number) >= 0) {
        model.nextNonce.set(signer.address, (model.nextNonce.get(signer.address) ?? 0) + 1);
      }
    } else {
      stats.rejected += 1;
      const reason = `${reply.error?.code} ${reply.error?.data?.reason ?? ""}`;
      stats.reasons[reason] = (stats.reasons[reason] ?? 0) + 1;
    }
    if (verdict.accept === "undecided") {
      stats.undecided += 1;
      return;
    }
    const detail = `mutation ${JSON.stringify(mutation)}\nparams ${JSON.stringify(params)}\noracle: ${verdict.why}\nnode: ${http.text}`;
    if (verdict.accept !== accepted) {
      throw new Error(
        `node ${accepted ? "accepted" : "rejected"} what the oracle ${verdict.accept ? "accepts" : "rejects"}\n${detail}`,
      );
    }
    if (accepted) {
      const body = (params as { transaction: ainUtil.TransactionBody }).transaction;
      const expected = `0x${ainUtil.hashTransaction(body).toString("hex")}`;
      if (reply.result !== expected)
        throw new Error(`hash ${String(reply.result)}, ain-util says ${expected}\n${detail}`);
    } else if (reply.error?.code !== -32602 && reply.error?.code !== -32003) {
      throw new Error(`a refused transaction is -32602 or -32003\n${detail}`);
    } else if (typeof reply.error.data?.reason !== "string") {
      throw new Error(`a refusal carries data.reason\n${detail}`);
    }
  };
  const group = fc.array(fc.tuple(baseArb(signers.length), mutationArb), {
    minLength: GROUP,
    maxLength: GROUP,
  });
  return fc.asyncProperty(group, async (items) => {
    const prepared = items.map(prepare);
    await Promise.all(prepared.filter((p) => !isOrdered(p)).map(sendAndCheck));
    for (const p of prepared.filter(isOrdered)) await sendAndCheck(p);
  });
}

/** Runs at least `mutations` mutations (in groups); returns fast-check's details. */
export async function runTxFuzz(context: TxFuzzContext, mutations: number, seed?: number) {
  const started = performance.now();
  const details = await fc.check(txProperty(context), {
    numRuns: Math.ceil(mutations / GROUP),
    ...(seed === undefined ? {} : { seed }),
  });
  context.stats.seconds += (performance.now() - started) / 1000;
  return details;
}

/** `npm run fuzz:rpc -- --tx`: the same property for as many runs as asked. Returns the exit code. */
export async function runTxFuzzScript(
  runs: number,
  seed: number,
  out: (line: string) => void,
): Promise<number> {
  const node = await startFuzzTarget({ pool: FUZZ_POOL });
  try {
    const context = await createTxFuzzContext(node.url, node.privateKeys);
    try {
      out(`fuzz:rpc --tx: ${runs} mutations, seed ${seed}, node pid ${node.pid}`);
      const slice = 5_000;
      let failed = false;
      for (let done = 0, round = 0; done < runs && !failed; round++) {
        const count = Math.min(slice, runs - done);
        const details = await runTxFuzz(context, count, seed + round);
        done += count;
        const s = context.stats;
        out(
          `  ${s.sent} sent, ${s.accepted} accepted, ${s.rejected} rejected, ${(s.sent / s.seconds).toFixed(0)}/s`,
        );
        if (details.failed) {
          failed = true;
          const cause =
            details.errorInstance instanceof Error
              ? details.errorInstance.message
              : String(details.errorInstance);
          out(`FAILURE (seed ${seed + round}):\n${fc.defaultReportMessage(details) ?? ""}\n${cause}`);
        }
      }
      out(`by mutation: ${JSON.stringify(context.stats.byKind)}`);
      out(`refusals: ${JSON.stringify(context.stats.reasons)}`);
      out(`node alive: ${node.alive()}, RSS ${(node.rssBytes() / 2 ** 20).toFixed(0)} MiB`);
      return failed || !node.alive() ? 1 : 0;
    } finally {
      context.target.close();
    }
  } finally {
    await node.stop();
  }
}
