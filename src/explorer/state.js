/**
 * The path browser over the data tree: the value at a path (chain_getValue), at the head or at a
 * chosen height, with breadcrumbs to its parents, links to its children, and a proof checked in
 * the page (prove.js). At the head it follows the path live (subscription topic "value").
 */
import { blockLink, failure, fields, h, table } from "./dom.js";
import { byKey, jsonLeaf, jsonTree, stateHref } from "./json.js";
import { proofSection } from "./prove.js";
import { RpcError, rpc } from "./rpc.js";

/** The tree's top-level parts (src/chain/operation.ts): the path "/" itself is not readable. */
const ROOTS = [
  ["account", "balances, nonces and stakes, kept by the node"],
  ["chain", "chain id, network id and consensus parameters, from genesis"],
  ["staking", "stake and unstake writes, by address"],
  ["transfer", "transfers, by sender and recipient"],
  ["users", "data each account writes under its own address"],
];

/** Path text to segments; empty segments (leading, trailing or doubled slashes) are dropped. */
const segmentsOf = (text) => text.split("/").filter((segment) => segment !== "");
const refOf = (segments) => `/${segments.join("/")}`;
const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** The form that opens a path, at the head or at a height. */
function pathForm(segments, block) {
  const path = h("input", {
    id: "state-path",
    class: "field",
    name: "path",
    value: refOf(segments),
    placeholder: "/users/0x…/profile",
    "aria-label": "Path in the data tree",
    autocomplete: "off",
    spellcheck: "false",
  });
  const height = h("input", {
    id: "state-block",
    class: "field",
    name: "block",
    type: "number",
    min: 0,
    step: 1,
    value: block,
    placeholder: "head",
    "aria-label": "Block number (empty for the head)",
  });
  const form = h(
    "form",
    { id: "state-form", class: "inline-form" },
    path,
    h("label", {}, "at block ", height),
    h("button", { type: "submit" }, "Show"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const at = height.value.trim();
    location.hash = stateHref(segmentsOf(path.value), /^\d+$/.test(at) ? Number(at) : undefined);
  });
  return form;
}

/** "/ › users › 0xAb… › profile": each part links to its own path; the last is this page. */
function breadcrumbs(segments, block) {
  const crumbs = [h("a", { href: stateHref([], block) }, "/")];
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    crumbs.push(
      h("span", { class: "sep", "aria-hidden": "true" }, " › "),
      last
        ? h("span", { "aria-current": "page" }, segment)
        : h("a", { href: stateHref(segments.slice(0, index + 1), block) }, segment),
    );
  });
  return h("nav", { id: "breadcrumbs", class: "breadcrumbs", "aria-label": "Parent paths" }, crumbs);
}

/** An object's keys, each a link to its child path, with the child's value or size beside it. */
function childrenTable(value, segments, block) {
  const rows = Object.keys(value)
    .sort(byKey)
    .map((key) => {
      const child = value[key];
      return h(
        "tr",
        { "data-key": key },
        h("td", {}, h("a", { class: "mono", href: stateHref([...segments, key], block) }, key)),
        h(
          "td",
          {},
          isObject(child)
            ? h("span", { class: "muted" }, `{${Object.keys(child).length} keys}`)
            : jsonLeaf(child),
        ),
      );
    });
  return table([["Key"], ["Value"]], rows, { id: "state-children" });
}

/** The value part of the page: a leaf, an object's children, or "nothing stored". */
function valueBlock(value, segments, block) {
  if (value === null) {
    return h(
      "p",
      { class: "notice", "data-state": "empty", id: "state-value" },
      "Nothing is stored at this path.",
    );
  }
  if (!isObject(value)) {
    return h("div", { id: "state-value", "data-kind": "leaf" }, h("pre", { class: "leaf" }, jsonLeaf(value)));
  }
  return h(
    "div",
    { id: "state-value", "data-kind": "object" },
    childrenTable(value, segments, block),
    h(
      "details",
      { class: "subtree" },
      h("summary", {}, "The whole subtree as a tree"),
      jsonTree(value, segments, block),
    ),
  );
}

const kindOf = (value) =>
  value === null
    ? "nothing stored"
    : isObject(value)
      ? `object with ${Object.keys(value).length} key${Object.keys(value).length === 1 ? "" : "s"}`
      : `leaf (${Array.isArray(value) ? "array" : typeof value})`;

function landing(ctx) {
  ctx.render(
    h("h1", {}, "Data tree"),
    pathForm([], undefined),
    h("p", { class: "muted" }, "Every value on the chain lives at a path. Start from one of these:"),
    table(
      [["Path"], ["What it holds"]],
      ROOTS.map(([root, what]) =>
        h(
          "tr",
          {},
          h("td", {}, h("a", { class: "mono", href: stateHref([root]) }, `/${root}`)),
          h("td", {}, what),
        ),
      ),
      { id: "state-roots" },
    ),
  );
}

/** Why a read failed, in words: the node's limits and heights are the usual reasons. */
function readFailure(error, ref) {
  const reason = error instanceof RpcError ? error.data?.reason : undefined;
  if (reason === "response_too_large") {
    return h(
      "p",
      { class: "notice", "data-state": "too-large" },
      `${ref} holds more than ${error.data.limit ?? "the node's limit of"} leaves: open one of its children instead.`,
    );
  }
  if (reason === "pruned") {
    return h(
      "p",
      { class: "notice", "data-state": "pruned" },
      `This node no longer keeps that height's state; the first it keeps is block ${error.data.first_available}.`,
    );
  }
  return failure(`Could not read ${ref}`, error);
}

export async function stateView(ctx, live, path = "") {
  const segments = segmentsOf(path);
  if (segments.length === 0) return landing(ctx);
  const ref = refOf(segments);
  const asked = ctx.query.get("block");
  const fixed = asked !== null && /^\d{1,15}$/.test(asked) ? Number(asked) : undefined;
  // At the head, the page pins the head's height, so the value and its proof are of one block.
  const height = fixed ?? (await rpc("chain_getRecentBlockNumber"));
  const heading = [h("h1", {}, "Data tree"), pathForm(segments, fixed), breadcrumbs(segments, fixed)];
  let value;
  try {
    value = await rpc("chain_getValue", { ref, block_number: height });
  } catch (error) {
    ctx.render(...heading, readFailure(error, ref));
    return;
  }

  const at = h("span", { id: "state-height" });
  const kind = h("span", { id: "state-kind" });
  const content = h("div", {});
  const proof = h("div", {});
  let shown = -1;
  const show = (newValue, newHeight) => {
    // A re-read may answer after a newer notification: never go back to an older block.
    if (newHeight < shown) return;
    shown = newHeight;
    at.replaceChildren(blockLink(newHeight), fixed === undefined ? " (head, live)" : "");
    kind.textContent = kindOf(newValue);
    content.replaceChildren(valueBlock(newValue, segments, fixed));
    // A proof is of one height: a new value needs a new one.
    proof.replaceChildren(proofSection(ref, newHeight, newValue));
  };
  show(value, height);
  ctx.render(
    ...heading,
    fields([
      ["Path", h("span", { class: "mono", id: "state-ref" }, ref)],
      ["At block", at],
      ["Value", kind],
    ]),
    content,
    proof,
  );
  if (fixed === undefined) {
    // Once subscribed (and after a reconnect), read again what may have changed unseen.
    const reread = async () => {
      const head = await rpc("chain_getRecentBlockNumber");
      if (head > shown) show(await rpc("chain_getValue", { ref, block_number: head }), head);
    };
    ctx.onLeave(
      live.subscribe(
        { topic: "value", ref },
        (update) => show(update.value, update.block_number),
        () => reread().catch(() => {}),
      ),
    );
  }
}
