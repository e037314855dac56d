/**
 * Fills a fresh dev node with one block of 100 transactions: ten unordered transfers from each of
 * the ten funded dev accounts (keys from the public dev mnemonic), sent as one
 * `chain_sendSignedTransactionBatch` so that all 100 are pending when the producer runs and land in
 * the same block. Returns that block's number once it is committed.
 */
import { hexToBytes, signObject } from "../src/crypto/index.ts";
import { devAccounts } from "../src/node/index.ts";
import { post } from "./procs.ts";

export const FILL_TXS = 100;

interface Reply<T> {
  result?: T;
  error?: { code: number; message: string };
}

async function call<T>(url: string, method: string, params?: unknown): Promise<T> {
  const request: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) request.params = params;
  const reply = await post(url, JSON.stringify(request));
  const json = JSON.parse(reply.text) as Reply<T>;
  if (reply.status !== 200 || json.error !== undefined || !("result" in json)) {
    throw new Error(`${method} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  return json.result as T;
}

export async function fillBlock(url: string): Promise<number> {
  const chainId = await call<number>(url, "net_chainId");
  const accounts = devAccounts();
  const timestamp = Date.now();
  const txList = [];
  for (let i = 0; i < FILL_TXS; i++) {
    const from = accounts[i % accounts.length];
    const to = accounts[(i + 1) % accounts.length];
    if (from === undefined || to === undefined) throw new Error("no dev accounts");
    const transaction = {
      nonce: -1,
      timestamp,
      operation: {
        type: "SET_VALUE",
        ref: `/transfer/${from.address}/${to.address}/bench-${i}/value`,
        value: 1 + i,
      },
    };
    txList.push({ signature: signObject(transaction, hexToBytes(from.privateKey), chainId), transaction });
  }
  const before = await call<number>(url, "chain_getRecentBlockNumber");
  const hashes = await call<string[]>(url, "chain_sendSignedTransactionBatch", { tx_list: txList });
  if (hashes.length !== FILL_TXS) throw new Error(`batch admitted ${hashes.length} of ${FILL_TXS}`);

  const deadline = Date.now() + 15_000;
  for (;;) {
    const head = await call<number>(url, "chain_getRecentBlockNumber");
    let found = 0;
    for (let n = before + 1; n <= head; n++) {
      const block = await call<{ transactions: string[] }>(url, "chain_getBlockByNumber", {
        number: n,
        getFullTransactions: false,
      });
      found += block.transactions.length;
      if (block.transactions.length === FILL_TXS) return n;
    }
    if (found >= FILL_TXS) throw new Error(`the ${FILL_TXS} transactions were split over several blocks`);
    if (Date.now() > deadline) throw new Error(`no block with ${FILL_TXS} transactions within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
