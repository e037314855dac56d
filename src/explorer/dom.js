/**
 * Building the page from chain data, as text only: `h` makes elements with textContent children
 * (never innerHTML), so a value written by a transaction (any JSON) cannot become markup.
 */

export const HASH = /^0x[0-9a-fA-F]{64}$/;
export const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
export const BLOCK_NUMBER = /^\d{1,15}$/;

/**
 * `h("td", {class: "num"}, "12")`: an element with attributes and children. Strings become text
 * nodes; null, undefined and false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
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

export const short = (hex) => (hex.length > 18 ? `${hex.slice(0, 10)}…${hex.slice(-6)}` : hex);
export const amount = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : String(n));

export function when(ms) {
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
export const blockLink = (number) => h("a", { href: `#/block/${number}` }, `#${number}`);
export const txLink = (hash, full = false) =>
  HASH.test(hash)
    ? h("a", { href: `#/tx/${hash}`, class: "mono", title: hash }, full ? hash : short(hash))
    : hash;
export const addressLink = (address, full = false) =>
  ADDRESS.test(address)
    ? h("a", { href: `#/address/${address}`, class: "mono", title: address }, full ? address : short(address))
    : String(address);

/** A definition list of [label, value] rows; rows with an undefined value are left out. */
export const fields = (rows) =>
  h(
    "dl",
    { class: "fields" },
    rows
      .filter(([, value]) => value !== undefined)
      .flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]),
  );

export const table = (headings, rows, attrs = {}) =>
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

export const notFound = (what) =>
  h("p", { class: "notice", "data-state": "not-found" }, `${what} not found.`);

/** A failure shown where the content would have been (the rest of the page stays usable). */
export const failure = (what, error) => h("p", { class: "notice error" }, `${what}: ${error.message}`);
