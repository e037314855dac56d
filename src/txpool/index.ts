/**
 * txpool: admission of submitted transactions (every rejection reason of DESIGN.md §3) and the
 * pending set in arrival order. Owns: which transactions wait for a block and why others were
 * refused. Does not own: execution (chain) or the journal's storage (declares PoolJournal).
 */
export { Admission, type AdmissionChainView, type PoolJournal } from "./admission.ts";
export { defaultTxPoolOptions, type TxPoolOptions } from "./options.ts";
export { type PoolEntry, TxPool } from "./pool.ts";
