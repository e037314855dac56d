import type { ConfirmedTx, StoredBlock, Tx } from "../chain/index.ts";

/** JSON shapes of the interface (spec §2), built from stored records. */

function txToJson(tx: Tx): Record<string, unknown> {
  const out: Record<string, unknown> = {
    hash: tx.hash,
    address: tx.address,
    signature: tx.signature,
    timestamp: tx.timestamp,
    nonce: tx.nonce,
  };
  if (tx.parent_tx_hash !== undefined) out.parent_tx_hash = tx.parent_tx_hash;
  out.operation = tx.operation;
  return out;
}

export function confirmedTxToJson(confirmed: ConfirmedTx): Record<string, unknown> {
  return {
    ...txToJson(confirmed.tx),
    block_hash: confirmed.block_hash,
    block_number: confirmed.block_number,
    index: confirmed.index,
    result: confirmed.result,
  };
}

/** A pending-list entry: status first, and no operation (spec §2). */
export function pendingEntryToJson(tx: Tx): Record<string, unknown> {
  const { operation: _operation, ...rest } = txToJson(tx);
  return { status: "PENDING", ...rest };
}

/** A pending transaction fetched by hash: the same with its operation. */
export function pendingTxToJson(tx: Tx): Record<string, unknown> {
  return { status: "PENDING", ...txToJson(tx) };
}

export function headerToJson(block: StoredBlock): Record<string, unknown> {
  const { header } = block;
  return {
    timestamp: header.timestamp,
    hash: block.hash,
    parent_hash: header.parent_hash,
    number: header.number,
    proposer: header.proposer,
    validators: block.validators,
    size: header.size,
    // Beyond the spec: what a client needs to recompute and check `hash`.
    transactions_hash: header.transactions_hash,
    state_root: header.state_root,
    last_commit_hash: header.last_commit_hash,
  };
}

export function blockToJson(
  block: StoredBlock,
  fullTransactions: boolean,
  loadTx: (hash: string) => ConfirmedTx | undefined,
): Record<string, unknown> {
  const transactions = fullTransactions
    ? block.tx_hashes.map((hash) => {
        const confirmed = loadTx(hash);
        if (confirmed === undefined) throw new Error(`block ${block.header.number} lists missing tx ${hash}`);
        return txToJson(confirmed.tx);
      })
    : block.tx_hashes;
  return { ...headerToJson(block), transactions };
}
