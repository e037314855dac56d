/**
 * txpool: admission of submitted transactions (every rejection reason of DESIGN.md §3) and the
 * pending set in arrival order; PendingPool is the one face of it that block making and sync get
 * (select for a block, remove a committed block's transactions). Owns: which transactions wait for a block and why others were
 * refused. Does not own: execution (chain) or the journal's storage (declares PoolJournal).
 */
export { Admission, type AdmissionChainView, type PoolJournal } from "./admission.ts";
export { defaultTxPoolOptions, type TxPoolOptions } from "./options.ts";
export { type BlockLimits, PendingPool } from "./pendingPool.ts";
export { type PoolEntry, TxPool } from "./pool.ts";
