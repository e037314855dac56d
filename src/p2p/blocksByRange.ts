const utf8 = new TextEncoder();

/** A blocks-by-range request: heights `from..to`, inclusive. */
export interface BlocksRequest {
  from: number;
  to: number;
}

/** A block height: a non-negative safe integer. */
export const isHeight = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/**
 * The request exactly as the protocol allows (`{from, to}`, nothing else, `0 <= from <= to`,
 * safe integers), or `undefined`.
 */
export function parseBlocksRequest(value: unknown): BlocksRequest | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 2 || !keys.includes("from") || !keys.includes("to")) return undefined;
  const { from, to } = value as Record<string, unknown>;
  if (!isHeight(from) || !isHeight(to) || from > to) return undefined;
  return { from, to };
}

/** The range actually served: at most `maxBlocks` heights from `from`. */
export function clipRange(request: BlocksRequest, maxBlocks: number): BlocksRequest {
  return { from: request.from, to: Math.min(request.to, request.from + Math.max(1, maxBlocks) - 1) };
}

/**
 * The response body: a JSON array of the first items that fit in `maxBytes` (and at most
 * `maxItems`). Items that do not fit are left for the next request rather than failing the
 * whole answer; `cut` tells whether that happened. Items are pulled one at a time and none after
 * the first that does not fit: under load big blocks cut most answers to a quarter of the range,
 * and reading the rest from storage was wasted work for the serving node.
 */
export function encodeBlocksResponse(
  items: Iterable<unknown>,
  maxItems: number,
  maxBytes: number,
): { body: Uint8Array; count: number; cut: boolean } {
  const parts: string[] = [];
  // "[" + items joined by "," + "]": count the UTF-8 bytes as we go.
  let size = 2;
  let cut = false;
  for (const item of maxItems > 0 ? items : []) {
    const text = JSON.stringify(item) ?? "null";
    const bytes = Buffer.byteLength(text, "utf8") + (parts.length > 0 ? 1 : 0);
    if (size + bytes > maxBytes) {
      cut = true;
      break;
    }
    parts.push(text);
    size += bytes;
    if (parts.length >= maxItems) break;
  }
  const body = utf8.encode(`[${parts.join(",")}]`);
  return { body, count: parts.length, cut };
}
