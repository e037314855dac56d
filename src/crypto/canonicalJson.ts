/**
 * Canonical JSON as the AIN signing library writes it (fast-json-stable-stringify):
 * object keys sorted at every level, no whitespace, undefined members dropped,
 * arrays kept in order, numbers and strings exactly as JSON.stringify writes them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const text = JSON.stringify(value);
    // JSON.stringify(undefined) is undefined; inside arrays it becomes null, as in JSON.stringify.
    return text === undefined ? "null" : text;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => canonicalJson(item)).join(",")}]`;
  }
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${parts.join(",")}}`;
}
