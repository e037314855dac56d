import type { TxRejectReason } from "./errors.ts";
import { joinPath, MAX_PATH_CHARS, MAX_PATH_DEPTH, normalizeAddressSegment, parsePath } from "./path.ts";
import type { JsonValue, SetValueOperation } from "./types.ts";

/**
 * What a SET_VALUE means once its path is read against DESIGN.md §4's permission table.
 * The same classification serves admission (against pending state) and execution (against the
 * block's state), so the two can never disagree about who may write where.
 */
export type ClassifiedOperation =
  | { kind: "transfer"; from: string; to: string; key: string; amount: number; ref: string }
  | { kind: "stake"; address: string; key: string; amount: number; ref: string }
  | { kind: "userData"; ref: string; value: JsonValue };

export type ClassifyResult =
  | { ok: true; op: ClassifiedOperation }
  | {
      ok: false;
      reason: Extract<TxRejectReason, "permission_denied" | "invalid_operation">;
      message: string;
    };

const denied = (message: string): ClassifyResult => ({ ok: false, reason: "permission_denied", message });
const invalid = (message: string): ClassifyResult => ({ ok: false, reason: "invalid_operation", message });

function isSafeAmount(value: JsonValue): value is number {
  return typeof value === "number" && Number.isSafeInteger(value);
}

/** Checks the operation's own shape: exactly {type: "SET_VALUE", ref, value}. */
export function isSetValueShape(op: unknown): op is SetValueOperation {
  if (op === null || typeof op !== "object" || Array.isArray(op)) return false;
  const keys = Object.keys(op);
  const record = op as Record<string, unknown>;
  return (
    keys.length === 3 &&
    record.type === "SET_VALUE" &&
    typeof record.ref === "string" &&
    "value" in record &&
    record.value !== undefined
  );
}

export function classifyOperation(op: SetValueOperation, sender: string): ClassifyResult {
  const segments = parsePath(op.ref);
  if (segments === undefined) return invalid(`malformed path ${JSON.stringify(op.ref)}`);
  const [root] = segments;
  switch (root) {
    case "transfer":
      return classifyTransfer(segments, op.value, sender);
    case "staking":
      return classifyStake(segments, op.value, sender);
    case "users": {
      const owner = segments[1] === undefined ? undefined : normalizeAddressSegment(segments[1], sender);
      if (owner === undefined)
        return denied("writes under /users must name an address: /users/<address>/...");
      if (owner !== sender) return denied(`only ${owner} may write under /users/${owner}`);
      const ref = joinPath(["users", owner, ...segments.slice(2)]);
      const keyProblem = findBadObjectKey(op.value, ref, segments.length);
      if (keyProblem !== undefined) return invalid(keyProblem);
      return { ok: true, op: { kind: "userData", ref, value: op.value } };
    }
    case "account":
      return denied("balances, nonces and stakes are maintained by the node and cannot be written");
    default:
      return denied(`no account may write to /${root}`);
  }
}

function classifyTransfer(segments: string[], value: JsonValue, sender: string): ClassifyResult {
  if (segments.length !== 5 || segments[4] !== "value") {
    return denied("a transfer is written at /transfer/<from>/<to>/<key>/value");
  }
  const from = normalizeAddressSegment(segments[1] as string, sender);
  const to = normalizeAddressSegment(segments[2] as string);
  if (from === undefined || to === undefined) return invalid("transfer path must name two addresses");
  if (from !== sender) return denied(`only ${from} may transfer from ${from}`);
  if (!isSafeAmount(value) || value <= 0) return invalid("a transfer amount is a positive safe integer");
  const key = segments[3] as string;
  return {
    ok: true,
    op: { kind: "transfer", from, to, key, amount: value, ref: joinPath(["transfer", from, to, key]) },
  };
}

function classifyStake(segments: string[], value: JsonValue, sender: string): ClassifyResult {
  if (segments.length !== 4 || segments[3] !== "value") {
    return denied("staking is written at /staking/<address>/<key>/value");
  }
  const address = normalizeAddressSegment(segments[1] as string, sender);
  if (address === undefined) return invalid("staking path must name an address");
  if (address !== sender) return denied(`only ${address} may stake for ${address}`);
  if (!isSafeAmount(value) || value === 0) return invalid("a stake amount is a non-zero safe integer");
  const key = segments[2] as string;
  return {
    ok: true,
    op: { kind: "stake", address, key, amount: value, ref: joinPath(["staking", address, key]) },
  };
}

/**
 * Object keys become path segments when the value is stored as leaves, so they obey the same
 * rules as segments, and the leaf paths they make obey the path limits.
 */
function findBadObjectKey(value: JsonValue, path: string, depth: number): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined; // arrays are one leaf
  for (const [key, member] of Object.entries(value)) {
    const parsed = parsePath(key);
    if (parsed?.length !== 1 || parsed[0] !== key)
      return `object key ${JSON.stringify(key)} cannot be a path segment`;
    const leafPath = `${path}/${key}`;
    if (depth + 1 > MAX_PATH_DEPTH || leafPath.length > MAX_PATH_CHARS) {
      return `value nests too deep: leaf paths are limited to ${MAX_PATH_DEPTH} segments and ${MAX_PATH_CHARS} characters`;
    }
    const inner = findBadObjectKey(member, leafPath, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}
