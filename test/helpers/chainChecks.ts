import assert from "node:assert/strict";
import { rpc } from "./process.ts";
import { signTx, transferBody, waitFor } from "./testNode.ts";
import type { Testnet } from "./testnet.ts";

/** Checks over the chains of a testnet's nodes, shared by the network e2e tests. */

export interface BlockJson {
  number: number;
  hash: string;
  state_root: string;
  timestamp: number;
  proposer: string;
  validators: string[];
}

/**
 * `count` unordered transfers of `amount` between the testnet's funded accounts (i to i + 1), sent
 * round-robin to `nodes`; returns their hashes. `tag` keeps the transfer keys of calls apart.
 */
export async function sendRoundRobin(
  net: Testnet,
  nodes: number[],
  options: { count: number; amount: number; tag: string },
): Promise<string[]> {
  const { accounts, chain_id } = net.file;
  const hashes: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const from = accounts[i % accounts.length];
    const to = accounts[(i + 1) % accounts.length];
    assert.ok(from && to);
    const body = transferBody(from.address, to.address, options.amount, -1, `${options.tag}${i}`);
    const signed = signTx(from.private_key, body, chain_id);
    const node = nodes[i % nodes.length] as number;
    hashes.push(await rpc<string>(net.url(node), "chain_sendSignedTransaction", signed));
  }
  return hashes;
}

/** Blocks from..to of node `index`, fetched 100 at a time. */
export async function blocksOf(net: Testnet, index: number, from: number, to: number): Promise<BlockJson[]> {
  const blocks: BlockJson[] = [];
  for (let start = from; start <= to; start += 100) {
    const end = Math.min(to, start + 99);
    blocks.push(...(await rpc<BlockJson[]>(net.url(index), "chain_getBlocks", { from: start, to: end })));
  }
  return blocks;
}

/**
 * No two different block hashes at any height on any of `nodes` (each compared up to its own head);
 * returns the lowest head, up to which all of them hold every block.
 */
export async function assertSameChain(net: Testnet, nodes: number[]): Promise<number> {
  const heads = await Promise.all(nodes.map((i) => net.head(i)));
  const chains = await Promise.all(nodes.map((i, k) => blocksOf(net, i, 1, heads[k] ?? 0)));
  const top = Math.max(...heads);
  for (let h = 1; h <= top; h++) {
    const hashes = new Set<string>();
    const roots = new Set<string>();
    for (const [k, chain] of chains.entries()) {
      const block = chain[h - 1];
      if (block === undefined) continue;
      assert.equal(block.number, h, `node${nodes[k]} block at index ${h - 1} is number ${h}`);
      hashes.add(block.hash);
      roots.add(block.state_root);
    }
    assert.ok(hashes.size <= 1, `one hash at height ${h}: ${[...hashes].join(", ")}`);
    assert.ok(roots.size <= 1, `one state root at height ${h}`);
  }
  return Math.min(...heads);
}

/** No validator of `nodes` signed two different messages at one height/round/step. */
export function assertNoDoubleSigning(net: Testnet, nodes: number[]): number {
  let records = 0;
  for (const i of nodes) {
    const seen = new Map<string, string>();
    for (const record of net.signingLog(i)) {
      records += 1;
      const key = `${record.height}/${record.round}/${record.step}`;
      const body = JSON.stringify(record.body);
      assert.ok(!seen.has(key) || seen.get(key) === body, `node${i} signed two messages at ${key}`);
      seen.set(key, body);
    }
  }
  return records;
}

/** Waits until every node of `nodes` reports a head above `height`. */
export async function headsAbove(
  net: Testnet,
  nodes: number[],
  height: number,
  timeoutMs: number,
): Promise<void> {
  try {
    await waitFor(
      `nodes ${nodes.join(",")} above height ${height}`,
      async () =>
        (await Promise.all(nodes.map((i) => net.head(i)))).every((h) => h > height) ? true : undefined,
      timeoutMs,
    );
  } catch (error) {
    // What each node reached and logged last: a stalled network is otherwise a bare timeout.
    const heads = await Promise.all(nodes.map((i) => net.head(i).catch(() => "unreachable")));
    const logs = nodes.map(
      (i) => `--- node ${i} (head ${heads[nodes.indexOf(i)]}):\n${net.output(i).slice(-3_000)}`,
    );
    throw new Error(`${(error as Error).message}\n${logs.join("\n")}`);
  }
}
