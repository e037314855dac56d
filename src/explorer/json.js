/**
 * JSON values of the data tree, shown as text: a nested list for objects (keys linking to their
 * own path in the path browser), the JSON text for everything else. Keys and values are text
 * nodes only, whatever they contain.
 */
import { h } from "./dom.js";

/** Objects nested deeper than this start folded (a click opens them). */
const OPEN_DEPTH = 3;

/**
 * The path browser's link to `segments` (each part URL-encoded, so a key with "?", "#" or "%" stays
 * one segment), at `block` when given, else at the head.
 */
export function stateHref(segments, block) {
  const path = segments.map((segment) => encodeURIComponent(segment)).join("/");
  return `#/state${path === "" ? "" : `/${path}`}${block === undefined ? "" : `?block=${block}`}`;
}

/** Keys in natural order: n2 before n10, as a reader counts. */
export const byKey = (a, b) => a.localeCompare(b, "en", { numeric: true });

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** A leaf's JSON text, classed by its type (strings, numbers, booleans, null, arrays). */
export function jsonLeaf(value) {
  const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  return h("code", { class: `json json-${type}` }, JSON.stringify(value));
}

/**
 * `value` as a tree. With `base` (the path's segments), each key links to its child path, at
 * `block` when given.
 */
export function jsonTree(value, base, block, depth = 0) {
  if (!isObject(value)) return jsonLeaf(value);
  const keys = Object.keys(value).sort(byKey);
  if (keys.length === 0) return h("code", { class: "json json-object" }, "{}");
  const list = h(
    "ul",
    { class: depth === 0 ? "json-tree json-root" : "json-tree" },
    keys.map((key) => {
      const child = base === undefined ? undefined : [...base, key];
      return h(
        "li",
        { "data-key": key },
        child === undefined
          ? h("span", { class: "json-key" }, key)
          : h("a", { class: "json-key", href: stateHref(child, block) }, key),
        ": ",
        jsonTree(value[key], child, block, depth + 1),
      );
    }),
  );
  if (depth < OPEN_DEPTH) return list;
  return h("details", {}, h("summary", {}, `{${keys.length} ${keys.length === 1 ? "key" : "keys"}}`), list);
}
