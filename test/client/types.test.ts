import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type {
  ExecFailureReason,
  BlockHeader as NodeBlockHeader,
  SetValueOperation as NodeSetValueOperation,
  SignedTxInput,
  Tx,
  TxBody,
  TxLocation,
  TxRejectReason,
  TxResult,
} from "../../src/chain/index.ts";
import { EXEC_FAILURE_CODES, TX_REJECT_REASONS } from "../../src/chain/index.ts";
import {
  type BlockHeader,
  type ConfirmedTransaction,
  type ExecutionFailureReason,
  type JsonValue,
  type NodeInfo,
  RPC_ERROR_CODES,
  type SetValueOperation,
  type SignedTransaction,
  type Transaction,
  type TransactionBody,
  type TransactionRejectReason,
  type TransactionResult,
} from "../../src/client/index.ts";
import type { JsonValue as NodeJsonValue } from "../../src/chain/index.ts";
import {
  RPC_ERROR_CODES as NODE_RPC_ERROR_CODES,
  type NodeInfo as NodeNodeInfo,
} from "../../src/rpc/index.ts";
import { type Equal, expectType } from "./support.ts";

/**
 * The client declares its own wire types (so its dist does not carry the chain layer). These
 * checks tie them to the node's: tsc fails here the moment one side changes shape.
 */
describe("client types match the node's", () => {
  it("transaction shapes are the chain's", () => {
    expectType<Equal<JsonValue, NodeJsonValue>>();
    expectType<Equal<SetValueOperation, NodeSetValueOperation>>();
    expectType<Equal<TransactionBody, TxBody>>();
    expectType<Equal<SignedTransaction, SignedTxInput>>();
    expectType<Equal<Transaction, Tx>>();
    expectType<Equal<Omit<ConfirmedTransaction, keyof Transaction | "result">, Omit<TxLocation, "result">>>();
    expectType<Equal<NodeInfo, NodeNodeInfo>>();
  });

  it("a block header is the chain's header plus its hash and validators", () => {
    expectType<Equal<keyof BlockHeader, keyof NodeBlockHeader | "hash" | "validators">>();
    expectType<Equal<Omit<BlockHeader, "hash" | "validators">, NodeBlockHeader>>();
  });

  it("execution results name the chain's failure codes", () => {
    expectType<Equal<ExecutionFailureReason, ExecFailureReason>>();
    // The client's result is the chain's, narrowed to the codes the chain uses.
    expectType<TransactionResult extends TxResult ? true : false>();
    // Each reason carries the chain's code for it (a wrong code fails to compile).
    const codes: { [R in ExecutionFailureReason]: Extract<TransactionResult, { reason: R }>["code"] } =
      EXEC_FAILURE_CODES;
    assert.deepEqual(Object.keys(codes).sort(), Object.keys(EXEC_FAILURE_CODES).sort());
  });

  it("rejection reasons and error codes are the node's", () => {
    expectType<Equal<TransactionRejectReason, TxRejectReason>>();
    const reasons: readonly TransactionRejectReason[] = TX_REJECT_REASONS;
    assert.equal(reasons.length, 13);
    assert.deepEqual(
      Object.values(RPC_ERROR_CODES).sort(),
      Object.values(NODE_RPC_ERROR_CODES).sort(),
      "the client maps every code the node sends",
    );
  });
});
