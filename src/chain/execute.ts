import { EXEC_FAILURE_CODES, type ExecFailureReason } from "./errors.ts";
import { classifyOperation } from "./operation.ts";
import { balancePath, noncePath, stakePath } from "./path.ts";
import { balanceOf, nonceOf, type StateOverlay, stakeOf } from "./state.ts";
import type { Tx, TxResult } from "./types.ts";

const fail = (reason: ExecFailureReason): TxResult => ({ code: EXEC_FAILURE_CODES[reason], reason });

/**
 * Applies one transaction to the block's state. An ordered transaction consumes its nonce even
 * when its operation fails; a failed operation changes nothing else (every check runs before the
 * first write). The caller has already checked signature and nonce order. `credited` hears the
 * (checksum) recipient of a transfer that succeeded: the history index takes it from here rather
 * than classify the operation (a keccak for the checksum) a second time at commit.
 */
export function executeTx(state: StateOverlay, tx: Tx, credited?: (address: string) => void): TxResult {
  if (tx.nonce >= 0) state.setLeaf(noncePath(tx.address), nonceOf(state, tx.address) + 1);
  const classified = classifyOperation(tx.operation, tx.address);
  if (!classified.ok) return fail(classified.reason);
  const op = classified.op;
  switch (op.kind) {
    case "transfer": {
      if (state.getLeaf(`${op.ref}/value`) !== undefined) return fail("permission_denied");
      const fromBalance = balanceOf(state, op.from);
      if (fromBalance < op.amount) return fail("insufficient_balance");
      state.setLeaf(balancePath(op.from), fromBalance - op.amount);
      state.setLeaf(balancePath(op.to), balanceOf(state, op.to) + op.amount);
      state.setLeaf(`${op.ref}/value`, op.amount);
      state.setLeaf(`${op.ref}/result/code`, 0);
      credited?.(op.to);
      return { code: 0 };
    }
    case "stake": {
      if (state.getLeaf(`${op.ref}/value`) !== undefined) return fail("permission_denied");
      const balance = balanceOf(state, op.address);
      const stake = stakeOf(state, op.address);
      if (op.amount > 0 ? balance < op.amount : stake < -op.amount) return fail("insufficient_balance");
      state.setLeaf(balancePath(op.address), balance - op.amount);
      state.setLeaf(stakePath(op.address), stake + op.amount);
      state.setLeaf(`${op.ref}/value`, op.amount);
      return { code: 0 };
    }
    case "userData":
      state.setValue(op.ref, op.value);
      return { code: 0 };
  }
}
