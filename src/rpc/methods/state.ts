import { Type } from "@sinclair/typebox";
import {
  normalizeReadPath,
  StateUnavailableError,
  TooManyLeavesError,
  type ValueProof as ChainValueProof,
} from "../../chain/index.ts";
import { bytesToHex } from "../../crypto/index.ts";
import { STATE_READ_ERRORS } from "../errorDocs.ts";
import { invalidParams, limitExceeded, pruned } from "../errors.ts";
import type { Handlers, MethodTable } from "../method.ts";
import { StateValue, ValueProof } from "../resultSchemas.ts";
import { BlockNumber, Params } from "../schemas.ts";
import type { RpcContext } from "../types.ts";

const Ref = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: "path into the data tree, e.g. /users/0x…/profile",
});
const AtHeight = Params({
  ref: Ref,
  block_number: Type.Optional({ ...BlockNumber, description: "height to read at; the head when omitted" }),
});

/** The data tree (beyond the spec; DESIGN.md §12): values by path at kept heights, and their proofs. */
export const STATE_METHODS = {
  chain_getValue: {
    params: AtHeight,
    summary:
      "The JSON value at ref at the head or at block_number: a leaf, a subtree rebuilt as one object, or null.",
    result: "JSON value | null",
    resultSchema: StateValue,
    errors: STATE_READ_ERRORS,
  },
  chain_getProof: {
    params: AtHeight,
    summary:
      "The value at ref with the trie nodes that prove it (or its absence) against the block's state_root.",
    result: "ValueProof",
    resultSchema: ValueProof,
    errors: STATE_READ_ERRORS,
  },
} satisfies MethodTable;

/** The path as the state stores it, or -32602 naming the member. */
function pathOf(ref: string): string {
  const path = normalizeReadPath(ref);
  if (path === undefined)
    throw invalidParams(`params.ref: ${JSON.stringify(ref)} is not a valid path`, { path: "/ref" });
  return path;
}

/** The chain's refusals as JSON-RPC errors; anything else stays unexpected. */
function answering<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof StateUnavailableError) {
      if (error.reason === "future")
        throw invalidParams(error.message, { path: "/block_number", head: error.height });
      throw pruned(`the state of that block`, error.height);
    }
    if (error instanceof TooManyLeavesError) {
      throw limitExceeded(error.message, "response_too_large", { limit: error.limit });
    }
    throw error;
  }
}

const proofToJson = (proof: ChainValueProof) => {
  const json: Record<string, unknown> = {
    block_number: proof.blockNumber,
    block_hash: proof.blockHash,
    state_root: proof.stateRoot,
    ref: proof.ref,
    value: proof.value,
    proof: proof.proof.map(bytesToHex),
  };
  if (proof.leaves !== undefined) {
    json.leaves = proof.leaves.map((leaf) => ({
      ref: leaf.ref,
      value: leaf.value,
      proof: leaf.proof.map(bytesToHex),
    }));
  }
  return json;
};

export function stateHandlers({ state }: RpcContext): Handlers<typeof STATE_METHODS> {
  return {
    chain_getValue: ({ ref, block_number }) => answering(() => state.value(pathOf(ref), block_number)),
    chain_getProof: ({ ref, block_number }) =>
      answering(() => proofToJson(state.prove(pathOf(ref), block_number))),
  };
}
