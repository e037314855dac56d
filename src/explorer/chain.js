/**
 * The chain's own pages: a block, a transaction (followed live while pending), the validator
 * set, and search.
 */
import {
  ADDRESS,
  addressLink,
  amount,
  BLOCK_NUMBER,
  blockLink,
  fields,
  h,
  HASH,
  notFound,
  table,
  txLink,
  when,
} from "./dom.js";
import { stateHref } from "./json.js";
import { rpc, rpcBatch } from "./rpc.js";

/** A transfer's destination and amount, read from its path (`/transfer/<from>/<to>/<key>/value`). */
export function transferOf(operation) {
  const parts = typeof operation?.ref === "string" ? operation.ref.split("/").filter((p) => p !== "") : [];
  if (parts[0] !== "transfer" || parts.length !== 5 || parts[4] !== "value") return undefined;
  return { to: parts[2], amount: operation.value };
}

export async function blockView(ctx, _live, id) {
  const block = BLOCK_NUMBER.test(id)
    ? await rpc("chain_getBlockByNumber", { number: Number(id), getFullTransactions: true })
    : await rpc("chain_getBlockByHash", { hash: id, getFullTransactions: true });
  if (block === null) {
    ctx.render(h("h1", {}, "Block"), notFound(`Block ${id}`));
    return;
  }
  const n = block.number;
  const rows = block.transactions.map((tx, index) => {
    const transfer = transferOf(tx.operation);
    return h(
      "tr",
      {},
      h("td", { class: "num" }, index),
      h("td", {}, txLink(tx.hash)),
      h("td", {}, addressLink(tx.address)),
      h(
        "td",
        {},
        transfer === undefined
          ? h("span", { class: "mono" }, tx.operation?.ref ?? "")
          : ["transfer to ", addressLink(transfer.to)],
      ),
      h("td", { class: "num" }, transfer === undefined ? "" : amount(transfer.amount)),
    );
  });
  ctx.render(
    h("h1", {}, `Block #${n}`),
    h(
      "p",
      { class: "pager" },
      n > 0 ? h("a", { href: `#/block/${n - 1}` }, "← previous") : null,
      h("a", { href: `#/block/${n + 1}` }, "next →"),
    ),
    fields([
      ["Number", String(n)],
      ["Hash", h("span", { class: "mono" }, block.hash)],
      [
        "Parent",
        block.parent_hash === ""
          ? "— (genesis)"
          : h("a", { href: `#/block/${n - 1}`, class: "mono" }, block.parent_hash),
      ],
      ["Time", when(block.timestamp)],
      ["Proposer", addressLink(block.proposer, true)],
      [
        "Validators",
        h(
          "span",
          {},
          block.validators.flatMap((v, i) =>
            i === 0 ? [addressLink(v, true)] : [", ", addressLink(v, true)],
          ),
        ),
      ],
      ["Size", `${amount(block.size)} bytes`],
      ["Transactions", String(block.transactions.length)],
      ["Transactions hash", h("span", { class: "mono" }, block.transactions_hash)],
      ["State root", h("span", { class: "mono" }, block.state_root)],
      ["Last commit hash", h("span", { class: "mono" }, block.last_commit_hash)],
    ]),
    h("h2", {}, "Transactions"),
    rows.length === 0
      ? h("p", { class: "muted" }, "No transactions in this block.")
      : table([["#", "num"], ["Hash"], ["From"], ["Operation"], ["Amount", "num"]], rows, {
          id: "block-transactions",
        }),
  );
}

function statusBadge(tx) {
  if (tx.status === "PENDING") return h("span", { class: "badge pending", id: "tx-status" }, "Pending");
  const ok = tx.result?.code === 0;
  return h(
    "span",
    { class: `badge ${ok ? "ok" : "bad"}`, id: "tx-status" },
    ok ? "Committed" : "Committed, failed",
  );
}

function renderTx(ctx, tx) {
  const transfer = transferOf(tx.operation);
  const committed = tx.status !== "PENDING";
  const result =
    tx.result === undefined
      ? undefined
      : tx.result.code === 0
        ? "success (code 0)"
        : `failed: code ${tx.result.code}, ${tx.result.reason ?? "no reason"}`;
  ctx.render(
    h("h1", {}, "Transaction"),
    fields([
      ["Hash", h("span", { class: "mono" }, tx.hash)],
      ["Status", statusBadge(tx)],
      ["Result", result === undefined ? undefined : h("span", { id: "tx-result" }, result)],
      ["Block", committed ? blockLink(tx.block_number) : "waiting for a block…"],
      ["Index in block", committed ? String(tx.index) : undefined],
      ["From", addressLink(tx.address, true)],
      ["To", transfer === undefined ? undefined : addressLink(transfer.to, true)],
      ["Amount", transfer === undefined ? undefined : amount(transfer.amount)],
      ["Nonce", tx.nonce === -1 ? "-1 (unordered)" : String(tx.nonce)],
      ["Time", when(tx.timestamp)],
      ["Operation", h("pre", {}, JSON.stringify(tx.operation, null, 2))],
      ["Parent transaction", tx.parent_tx_hash === undefined ? undefined : txLink(tx.parent_tx_hash, true)],
      ["Signature", h("span", { class: "mono" }, tx.signature)],
    ]),
  );
}

export async function txView(ctx, live, hash) {
  const tx = await rpc("chain_getTransactionByHash", { hash });
  if (tx === null) {
    ctx.render(h("h1", {}, "Transaction"), notFound(`Transaction ${hash}`));
    return;
  }
  renderTx(ctx, tx);
  if (tx.status !== "PENDING") return;
  // Pending: follow it until the node commits it (the subscription then ends by itself).
  const stop = live.subscribe({ topic: "transaction", hash }, (update) => {
    if (update.status === "PENDING") return;
    stop();
    renderTx(ctx, update);
  });
  ctx.onLeave(stop);
}

export async function validatorsView(ctx) {
  const head = await rpc("chain_getRecentBlockNumber");
  const validators = await rpc("chain_getValidatorsByNumber", { number: head });
  const stakes =
    validators.length === 0
      ? []
      : await rpcBatch(validators.map((address) => ["chain_getConsensusStakeAmount", { address }]));
  const total = stakes.reduce((sum, stake) => sum + stake, 0);
  const rows = validators.map((address, i) =>
    h(
      "tr",
      {},
      h("td", {}, addressLink(address, true)),
      h("td", { class: "num" }, amount(stakes[i])),
      h("td", { class: "num" }, total === 0 ? "—" : `${((100 * stakes[i]) / total).toFixed(2)} %`),
    ),
  );
  ctx.render(
    h("h1", {}, "Validators"),
    h(
      "p",
      { class: "muted" },
      "Signers of the head block ",
      blockLink(head),
      `, with their current stakes (total ${amount(total)}).`,
    ),
    table([["Address"], ["Stake", "num"], ["Share", "num"]], rows, { id: "validators" }),
  );
}

/**
 * A number is a block, an address an account, "/…" a path of the data tree; a hash is tried as a
 * block, then as a transaction.
 */
export async function searchView(ctx, _live, text) {
  const query = text.trim();
  if (BLOCK_NUMBER.test(query)) return location.replace(`#/block/${Number(query)}`);
  if (ADDRESS.test(query)) return location.replace(`#/address/${query}`);
  if (query.startsWith("/")) return location.replace(stateHref(query.split("/").filter((s) => s !== "")));
  if (HASH.test(query)) {
    const block = await rpc("chain_getBlockByHash", { hash: query, getFullTransactions: false });
    if (block !== null) return location.replace(`#/block/${block.number}`);
    const tx = await rpc("chain_getTransactionByHash", { hash: query });
    if (tx !== null) return location.replace(`#/tx/${query.toLowerCase()}`);
    return ctx.render(h("h1", {}, "Search"), notFound(`Block or transaction ${query}`));
  }
  ctx.render(
    h("h1", {}, "Search"),
    h(
      "p",
      { class: "notice" },
      `"${query}" is not a block number, a 32-byte hash, a 20-byte address or a /path.`,
    ),
  );
}
