/**
 * chain-node explorer: vanilla ES modules, no framework, no build. It uses only what any client
 * has: the JSON-RPC endpoint (POST /) and the WebSocket (/ws) with its subscriptions; a proof is
 * checked with the client package's own verifier, served as /explorer/verifier.js.
 *
 * Everything from the chain is rendered as text (dom.js: textContent, never innerHTML): a value
 * written by a transaction (any JSON) cannot become markup. Routes are in the URL hash:
 *   #/                 latest blocks and charts (live)   #/block/<number|hash>   a block
 *   #/tx/<hash>        a transaction (live while pending)
 *   #/address/<addr>   an account, its history and data  #/validators            the validator set
 *   #/state/<path>     the data tree at a path (?block=N for a past height), with its proof
 *   #/search/<text>    resolves to one of the above, or says "not found"
 *
 * Modules: dom.js (elements), rpc.js (HTTP calls), live.js (WebSocket), home.js + charts.js,
 * chain.js (block, transaction, validators, search), account.js, state.js + json.js + prove.js.
 */
import { accountView } from "./account.js";
import { blockView, searchView, txView, validatorsView } from "./chain.js";
import { h, notFound } from "./dom.js";
import { homeView } from "./home.js";
import { LiveFeed } from "./live.js";
import { stateView } from "./state.js";

const view = document.getElementById("view");

/**
 * What a view may do while it is current: render, and register cleanup for when it is left.
 * `query` holds the hash's parameters (`#/state/users?block=12`).
 */
class ViewContext {
  constructor(query) {
    this.cleanups = [];
    this.current = true;
    this.query = query;
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

const ROUTES = [
  [/^$/, homeView],
  [/^block\/(\d{1,15}|0x[0-9a-fA-F]{64})$/, blockView],
  [/^tx\/(0x[0-9a-fA-F]{64})$/, txView],
  [/^address\/(0x[0-9a-fA-F]{40})$/, accountView],
  [/^validators$/, validatorsView],
  [/^state(?:\/(.*))?$/, stateView],
  [/^search\/(.*)$/, searchView],
];

// ---- Router ------------------------------------------------------------------------------------

let current = null;

function route(live) {
  current?.leave();
  // Links encode each part (encodeURIComponent), so the first "?" always starts the query.
  const hash = location.hash.replace(/^#\/?/, "");
  const cut = hash.indexOf("?");
  const path = cut === -1 ? hash : hash.slice(0, cut);
  const ctx = new ViewContext(new URLSearchParams(cut === -1 ? "" : hash.slice(cut + 1)));
  current = ctx;
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
