/**
 * The home page: charts of the last blocks and the latest blocks' table, both following new
 * blocks over the WebSocket (topic newBlocks).
 */
import { blockCharts } from "./charts.js";
import { addressLink, blockLink, h, short, when } from "./dom.js";
import { RpcError, rpc, rpcBatch } from "./rpc.js";

/** Blocks in the table. */
const LATEST = 20;
/** Blocks in the charts (within chain_getBlocks' default range limit of 100, with the one before). */
const CHART_BLOCKS = 60;
/** Blocks the page holds: the charted ones and the one before the first, for its interval. */
const HELD = CHART_BLOCKS + 1;

const blockRow = (block, fresh = false) =>
  h(
    "tr",
    { class: fresh ? "new" : undefined, "data-number": block.number },
    h("td", {}, blockLink(block.number)),
    h("td", { class: "mono", title: block.hash }, short(block.hash)),
    h("td", { class: "num" }, block.transactions.length),
    h("td", {}, addressLink(block.proposer)),
    h("td", {}, when(block.timestamp)),
  );

/**
 * Blocks from..to, ascending. A node that prunes (storage.retain_blocks, as few as 2) may no longer
 * hold the first ones: the range then starts at the first block it keeps.
 */
async function blocksBetween(from, to) {
  if (from > to) return [];
  try {
    return await rpc("chain_getBlocks", { from, to });
  } catch (error) {
    const first =
      error instanceof RpcError && error.data?.reason === "pruned" ? error.data.first_available : undefined;
    if (typeof first !== "number" || first <= from) throw error;
    return first > to ? [] : rpc("chain_getBlocks", { from: first, to });
  }
}

export async function homeView(ctx, live) {
  const [head, chainId, networkId] = await rpcBatch([
    ["chain_getRecentBlockNumber"],
    ["net_chainId"],
    ["net_id"],
  ]);
  // Ascending and consecutive, at most HELD: what the charts draw and the table starts from.
  let blocks = await blocksBetween(Math.max(0, head - HELD + 1), head);
  const charts = blockCharts(CHART_BLOCKS);
  charts.update(blocks);
  const tbody = h(
    "tbody",
    {},
    blocks
      .slice(-LATEST)
      .reverse()
      .map((block) => blockRow(block)),
  );
  const headCell = h("strong", { id: "head-number" }, `#${head}`);
  ctx.render(
    h("h1", {}, "Latest blocks"),
    h(
      "p",
      { class: "muted" },
      "Head ",
      headCell,
      ` · chain id ${chainId} · ${networkId === 0 ? "main network" : "test network"} · new blocks appear live`,
    ),
    charts.element,
    h(
      "table",
      { id: "latest-blocks" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Block"),
          h("th", {}, "Hash"),
          h("th", { class: "num" }, "Txs"),
          h("th", {}, "Proposer"),
          h("th", {}, "Time"),
        ),
      ),
      tbody,
    ),
  );

  /**
   * A new head. Blocks come in order, but the socket may have missed some (a reconnect replays
   * nothing, and blocks committed before the subscription started were never sent): those are
   * fetched first, so the table has no hole and no interval spans two blocks.
   */
  async function accept(block) {
    const last = blocks.at(-1)?.number ?? -1;
    if (block.number <= last) return; // already shown
    const missing = await blocksBetween(Math.max(last + 1, block.number - HELD + 1), block.number - 1);
    const arrived = [...missing, block];
    blocks = [...blocks, ...arrived].slice(-HELD);
    for (const fresh of arrived) tbody.prepend(blockRow(fresh, true));
    while (tbody.children.length > LATEST) tbody.lastElementChild.remove();
    headCell.textContent = `#${block.number}`;
    charts.update(blocks);
  }

  // One block at a time: a block that arrives while a gap is being fetched waits for it.
  let queue = Promise.resolve();
  const stop = live.subscribe({ topic: "newBlocks" }, (block) => {
    queue = queue
      .then(() => accept(block))
      .catch(() => {
        // The gap could not be fetched (node gone): the next block tries again from the same point.
      });
  });
  ctx.onLeave(stop);
}
