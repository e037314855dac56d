/**
 * chain-node explorer: one vanilla module, no framework, no build. It uses only what any client
 * has: the JSON-RPC endpoint (POST /) and the WebSocket (/ws) with its subscriptions.
 *
 * Everything from the chain is rendered as text (textContent, never innerHTML): a value written
 * by a transaction (any JSON) cannot become markup. Routes are in the URL hash:
 *   #/                 latest blocks (live)      #/block/<number|hash>   a block
 *   #/tx/<hash>        a transaction (live while pending)
 *   #/address/<addr>   an account                #/validators            the validator set
 *   #/search/<text>    resolves to one of the above, or says "not found"
 */

const HASH = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BLOCK_NUMBER = /^\d{1,15}$/;
/** Blocks on the front page. */
const LATEST = 20;

// ---- DOM: elements from data, text only ---------------------------------------------------------

/**
 * `h("td", {class: "num"}, "12")`: an element with attributes and children. Strings become text
 * nodes; null, undefined and false are skipped.
 */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const short = (hex) => (hex.length > 18 ? `${hex.slice(0, 10)}…${hex.slice(-6)}` : hex);
const amount = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : String(n));

function when(ms) {
  const seconds = Math.round((Date.now() - ms) / 1000);
  const ago =
    seconds < 60
      ? `${Math.max(seconds, 0)} s ago`
      : seconds < 3600
        ? `${Math.round(seconds / 60)} min ago`
        : "";
  const iso = new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, " UTC");
  return ago === "" ? iso : `${iso} (${ago})`;
}

// Links are built from values already checked against HASH / ADDRESS / a number, and always start
// with "#/", so no value can turn a link into another scheme.
const blockLink = (number) => h("a", { href: `#/block/${number}` }, `#${number}`);
const txLink = (hash, full = false) =>
  HASH.test(hash)
    ? h("a", { href: `#/tx/${hash}`, class: "mono", title: hash }, full ? hash : short(hash))
    : hash;
const addressLink = (address, full = false) =>
  ADDRESS.test(address)
    ? h("a", { href: `#/address/${address}`, class: "mono", title: address }, full ? address : short(address))
    : String(address);

/** A definition list of [label, value] rows; rows with an undefined value are left out. */
const fields = (rows) =>
  h(
    "dl",
    { class: "fields" },
    rows
      .filter(([, value]) => value !== undefined)
      .flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]),
  );

const table = (headings, rows, attrs = {}) =>
  h(
    "table",
    attrs,
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headings.map(([text, cls]) => h("th", { class: cls }, text)),
      ),
    ),
    h("tbody", {}, rows),
  );

const notFound = (what) => h("p", { class: "notice", "data-state": "not-found" }, `${what} not found.`);

// ---- JSON-RPC over HTTP -------------------------------------------------------------------------

let nextId = 1;

class RpcError extends Error {
  constructor(error) {
    super(`${error.message} (${error.code}${error.data?.reason ? `, ${error.data.reason}` : ""})`);
    this.code = error.code;
  }
}

async function post(body) {
  const response = await fetch("/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status === 204) return undefined;
  return response.json();
}

const request = (method, params) => {
  const call = { jsonrpc: "2.0", id: nextId++, method };
  if (params !== undefined) call.params = params;
  return call;
};

async function rpc(method, params) {
  const reply = await post(request(method, params));
  if (reply.error !== undefined) throw new RpcError(reply.error);
  return reply.result;
}

/** Several calls in one POST; results in call order. */
async function rpcBatch(calls) {
  const requests = calls.map(([method, params]) => request(method, params));
  const replies = await post(requests);
  const byId = new Map(replies.map((reply) => [reply.id, reply]));
  return requests.map((req) => {
    const reply = byId.get(req.id);
    if (reply === undefined) throw new Error(`no reply to ${req.method}`);
    if (reply.error !== undefined) throw new RpcError(reply.error);
    return reply.result;
  });
}

// ---- Live updates over the WebSocket ------------------------------------------------------------

/**
 * One WebSocket for the page. Subscriptions survive reconnects: their params are kept and sent
 * again when the socket reopens (the server gives new ids).
 */
class LiveFeed {
  constructor(onStatus) {
    this.onStatus = onStatus;
    this.socket = null;
    this.pending = new Map();
    this.subscriptions = new Set();
    this.retryMs = 500;
    this.connect();
  }

  get open() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/ws`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retryMs = 500;
      this.onStatus(true);
      for (const sub of this.subscriptions) this.start(sub);
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => {
      this.onStatus(false);
      for (const sub of this.subscriptions) sub.id = null;
      for (const waiter of this.pending.values()) waiter.reject(new Error("connection closed"));
      this.pending.clear();
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    });
  }

  call(method, params) {
    return new Promise((resolve, reject) => {
      if (!this.open) {
        reject(new Error("not connected"));
        return;
      }
      const call = request(method, params);
      this.pending.set(call.id, { resolve, reject });
      this.socket.send(JSON.stringify(call));
    });
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method === "chain_subscription") {
      for (const sub of this.subscriptions) {
        if (sub.id === message.params.subscription) sub.onResult(message.params.result);
      }
      return;
    }
    const waiter = this.pending.get(message.id);
    if (waiter === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined) waiter.reject(new RpcError(message.error));
    else waiter.resolve(message.result);
  }

  async start(sub) {
    try {
      const id = await this.call("chain_subscribe", sub.params);
      if (this.subscriptions.has(sub)) sub.id = id;
      else this.call("chain_unsubscribe", { subscription: id }).catch(() => {});
    } catch {
      // Not connected any more: the next "open" subscribes again.
    }
  }

  /** Subscribes; returns the function that ends it. */
  subscribe(params, onResult) {
    const sub = { params, onResult, id: null };
    this.subscriptions.add(sub);
    if (this.open) this.start(sub);
    return () => {
      if (!this.subscriptions.delete(sub)) return;
      if (sub.id !== null && this.open) {
        this.call("chain_unsubscribe", { subscription: sub.id }).catch(() => {});
      }
    };
  }
}

// ---- Views --------------------------------------------------------------------------------------

const view = document.getElementById("view");

/** What a view may do while it is current: render, and register cleanup for when it is left. */
class ViewContext {
  constructor() {
    this.cleanups = [];
    this.current = true;
  }

  render(...nodes) {
    if (this.current) view.replaceChildren(...nodes);
  }

  onLeave(cleanup) {
    this.cleanups.push(cleanup);
  }

  leave() {
    this.current = false;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}

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

async function homeView(ctx, live) {
  const [head, chainId, networkId] = await rpcBatch([
    ["chain_getRecentBlockNumber"],
    ["net_chainId"],
    ["net_id"],
  ]);
  const blocks = await rpc("chain_getBlocks", { from: Math.max(0, head - LATEST + 1), to: head });
  const tbody = h(
    "tbody",
    {},
    blocks.reverse().map((block) => blockRow(block)),
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
  const stop = live.subscribe({ topic: "newBlocks" }, (block) => {
    const top = Number(tbody.firstElementChild?.getAttribute("data-number") ?? -1);
    if (block.number <= top) return; // a reconnect may replay what the page already shows
    tbody.prepend(blockRow(block, true));
    headCell.textContent = `#${block.number}`;
    while (tbody.children.length > LATEST) tbody.lastElementChild.remove();
  });
  ctx.onLeave(stop);
}

/** A transfer's destination and amount, read from its path (`/transfer/<from>/<to>/<key>/value`). */
function transferOf(operation) {
  const parts = typeof operation?.ref === "string" ? operation.ref.split("/").filter((p) => p !== "") : [];
  if (parts[0] !== "transfer" || parts.length !== 5 || parts[4] !== "value") return undefined;
  return { to: parts[2], amount: operation.value };
}

async function blockView(ctx, _live, id) {
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

async function txView(ctx, live, hash) {
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

async function accountView(ctx, _live, address) {
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
  );
}

async function validatorsView(ctx) {
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

/** A number is a block, an address an account; a hash is tried as a block, then as a transaction. */
async function searchView(ctx, _live, text) {
  const query = text.trim();
  if (BLOCK_NUMBER.test(query)) return location.replace(`#/block/${Number(query)}`);
  if (ADDRESS.test(query)) return location.replace(`#/address/${query}`);
  if (HASH.test(query)) {
    const block = await rpc("chain_getBlockByHash", { hash: query, getFullTransactions: false });
    if (block !== null) return location.replace(`#/block/${block.number}`);
    const tx = await rpc("chain_getTransactionByHash", { hash: query });
    if (tx !== null) return location.replace(`#/tx/${query.toLowerCase()}`);
    return ctx.render(h("h1", {}, "Search"), notFound(`Block or transaction ${query}`));
  }
  ctx.render(
    h("h1", {}, "Search"),
    h("p", { class: "notice" }, `"${query}" is not a block number, a 32-byte hash or a 20-byte address.`),
  );
}

const ROUTES = [
  [/^$/, homeView],
  [/^block\/(\d{1,15}|0x[0-9a-fA-F]{64})$/, blockView],
  [/^tx\/(0x[0-9a-fA-F]{64})$/, txView],
  [/^address\/(0x[0-9a-fA-F]{40})$/, accountView],
  [/^validators$/, validatorsView],
  [/^search\/(.*)$/, searchView],
];

// ---- Router ------------------------------------------------------------------------------------

let current = null;

function route(live) {
  current?.leave();
  const ctx = new ViewContext();
  current = ctx;
  const path = location.hash.replace(/^#\/?/, "");
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A malformed escape: match the text as it is.
  }
  for (const [pattern, show] of ROUTES) {
    const match = pattern.exec(decoded);
    if (match === null) continue;
    show(ctx, live, ...match.slice(1)).catch((error) =>
      ctx.render(h("p", { class: "notice error" }, `Could not load this page: ${error.message}`)),
    );
    return;
  }
  ctx.render(h("h1", {}, "Not found"), notFound(`Page ${decoded}`));
}

function main() {
  const badge = document.getElementById("live");
  const live = new LiveFeed((on) => {
    badge.textContent = on ? "live" : "reconnecting…";
    badge.className = `live ${on ? "on" : "off"}`;
  });
  document.getElementById("search").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("search-input");
    const text = input.value.trim();
    if (text === "") return;
    const target = `#/search/${encodeURIComponent(text)}`;
    // The same search again changes no hash (no hashchange): route it directly.
    if (location.hash === target) route(live);
    else location.hash = target;
  });
  window.addEventListener("hashchange", () => route(live));
  route(live);
}

main();
