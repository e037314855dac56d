/**
 * Byte helpers of the proof verifier. src/crypto's hex helpers use Node's Buffer (the node's hot
 * paths want its speed); these use only what browsers also have, so the verifier can be bundled
 * for the explorer's page.
 */

const HEX_DIGITS = /^0x(?:[0-9a-fA-F]{2})*$/;

/** The bytes of `0x`-prefixed hex (any case, even length), or undefined if it is anything else. */
export function parseHexBytes(hex: string): Uint8Array | undefined {
  if (!HEX_DIGITS.test(hex)) return undefined;
  const bytes = new Uint8Array((hex.length - 2) / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 + 2 * i, 4 + 2 * i), 16);
  return bytes;
}

/** Lower-case `0x` hex, as the node writes hashes. */
export function bytesToHex(bytes: Uint8Array): string {
  let hex = "0x";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
