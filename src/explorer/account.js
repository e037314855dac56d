/**
 * An account: balance, stake and nonce; its transactions, newest first, a page at a time
 * (chain_getTransactionsByAddress); and the data it wrote under /users/<address> (chain_getValue),
 * kept current by a "value" subscription.
 */
import { transferOf } from "./chain.js";
import { addressLink, amount, blockLink, failure, fields, h, notFound, table, txLink } from "./dom.js";
import { jsonTree, stateHref } from "./json.js";
import { rpc, rpcBatch } from "./rpc.js";

/** Transactions per history page (the method's default is 25, its maximum 100). */
const HISTORY_PAGE = 25;

const sameAddress = (a, b) =>
  typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

/** A data write's path, linked to the path browser at the block that wrote it. */
function writeLink(tx) {
  const ref = typeof tx.operation?.ref === "string" ? tx.operation.ref : "";
  const segments = ref.split("/").filter((segment) => segment !== "");
  if (segments.length === 0) return "";
  return h("a", { class: "mono", href: stateHref(segments, tx.block_number) }, ref);
}

/** One history row, told from the account's side: what it sent, or a transfer it received. */
function historyRow(address, tx) {
  const transfer = transferOf(tx.operation);
  const sent = sameAddress(tx.address, address);
  const ok = tx.result?.code === 0;
  let what;
  if (transfer === undefined) what = writeLink(tx);
  else if (sent) what = ["transfer to ", addressLink(transfer.to)];
  else what = ["transfer from ", addressLink(tx.address)];
  return h(
    "tr",
    { "data-hash": tx.hash },
    h("td", {}, blockLink(tx.block_number)),
    h("td", {}, txLink(tx.hash)),
    h("td", {}, h("span", { class: `badge ${sent ? "out" : "in"}` }, sent ? "sent" : "received")),
    h("td", {}, what),
    h("td", { class: "num" }, transfer === undefined ? "" : `${sent ? "−" : "+"}${amount(transfer.amount)}`),
    h("td", {}, ok ? "ok" : h("span", { class: "bad" }, `failed: ${tx.result?.reason ?? tx.result?.code}`)),
  );
}

/** The history section: the first page now, older pages on "Older". */
function historySection(address) {
  const headings = [["Block"], ["Transaction"], ["Side"], ["Operation"], ["Amount", "num"], ["Result"]];
  const history = table(headings, [], { id: "history" });
  const tbody = history.tBodies[0];
  // A div: a failure shows in it as its own paragraph, and the next page's answer replaces it.
  const status = h("div", { class: "muted", id: "history-status" }, "Loading history…");
  const older = h("button", { type: "button", id: "history-older", hidden: true }, "Older");
  const section = h("section", { id: "account-history" }, h("h2", {}, "History"), history, status, older);
  let cursor = null;
  let shown = 0;

  async function loadPage() {
    older.disabled = true;
    try {
      const params = { address, limit: HISTORY_PAGE };
      if (cursor !== null) params.cursor = cursor;
      const page = await rpc("chain_getTransactionsByAddress", params);
      for (const tx of page.transactions) tbody.append(historyRow(address, tx));
      shown += page.transactions.length;
      cursor = page.next_cursor;
      older.hidden = cursor === null;
      status.textContent =
        shown === 0
          ? "No committed transactions."
          : `${amount(shown)} transaction${shown === 1 ? "" : "s"} shown, newest first${cursor === null ? "; that is all." : "."}`;
    } catch (error) {
      status.replaceChildren(failure("Could not load the history", error));
    } finally {
      older.disabled = false;
    }
  }
  older.addEventListener("click", () => loadPage());
  loadPage();
  return section;
}

/** The /users/<address> section: the value as a JSON tree, redrawn when a block changes it. */
function dataSection(address, live, ctx) {
  const segments = ["users", address];
  const ref = `/users/${address}`;
  const body = h("div", { id: "account-data-value" }, h("p", { class: "muted" }, "Loading…"));
  let shown = -1;
  const draw = (value, height) => {
    // A re-read may answer after a newer notification: never go back to an older block.
    if (height < shown) return;
    shown = height;
    body.replaceChildren(
      value === null
        ? h("p", { class: "muted", "data-state": "empty" }, `Nothing stored under ${ref}.`)
        : jsonTree(value, segments),
    );
  };
  const read = async () => {
    try {
      const head = await rpc("chain_getRecentBlockNumber");
      draw(await rpc("chain_getValue", { ref, block_number: head }), head);
    } catch (error) {
      body.replaceChildren(failure(`Could not read ${ref}`, error));
    }
  };
  read();
  // Read again once subscribed, and after a reconnect: nothing is replayed.
  ctx.onLeave(
    live.subscribe({ topic: "value", ref }, (update) => draw(update.value, update.block_number), read),
  );
  return h(
    "section",
    { id: "account-data" },
    h("h2", {}, "Data ", h("a", { class: "mono small", href: stateHref(segments) }, ref)),
    body,
  );
}

export async function accountView(ctx, live, address) {
  const [balance, stake, nonce, validator] = await rpcBatch([
    ["chain_getBalance", { address }],
    ["chain_getConsensusStakeAmount", { address }],
    ["chain_getNonce", { address }],
    ["chain_isValidator", { address }],
  ]);
  const title = h("h1", {}, "Account ", h("span", { class: "mono" }, address));
  if (balance === 0 && stake === 0 && nonce === 0 && !validator) {
    ctx.render(title, notFound("Account (no balance, stake or transactions)"));
    return;
  }
  ctx.render(
    title,
    fields([
      ["Balance", h("span", { id: "account-balance", "data-value": balance }, amount(balance))],
      ["Stake", h("span", { id: "account-stake", "data-value": stake }, amount(stake))],
      ["Nonce", h("span", { id: "account-nonce" }, String(nonce))],
      ["Validator", h("span", { id: "account-validator" }, validator ? "yes" : "no")],
    ]),
    dataSection(address, live, ctx),
    historySection(address),
  );
}
