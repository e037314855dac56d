import { classifyOperation } from "./operation.ts";
import type { Tx, TxResult } from "./types.ts";

/**
 * The accounts whose history a committed transaction belongs to (chain_getTransactionsByAddress):
 * its sender, and the recipient of a transfer that succeeded. Nothing else can touch another
 * account: stakes and `/users/<address>` data are written only by their owner (the permission
 * table in operation.ts), so "sent" covers them; a failed transfer moved nothing, so it belongs
 * to its sender alone (whose nonce it consumed). Checksum addresses, each once, sender first.
 *
 * Pure and deterministic: the store indexes a block's transactions with it, and recomputes the
 * same list from a stored transaction to delete its entries when the block is pruned.
 */
export function historyAddresses(tx: Tx, result: TxResult): string[] {
  if (result.code !== 0) return [tx.address];
  const classified = classifyOperation(tx.operation, tx.address);
  if (!classified.ok || classified.op.kind !== "transfer" || classified.op.to === tx.address) {
    return [tx.address];
  }
  return [tx.address, classified.op.to];
}

/**
 * historyAddresses for a transaction just executed, given whom it credited (ExecutedBlock.credited):
 * the same list without classifying the operation again. A successful transfer is the only
 * transaction that credits anyone; a self-transfer credits its sender, listed once.
 */
export function historyAddressesExecuted(tx: Tx, credited: string | undefined): string[] {
  return credited === undefined || credited === tx.address ? [tx.address] : [tx.address, credited];
}
