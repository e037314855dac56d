/** Hex helpers. All hex strings produced here are lowercase with a `0x` prefix. */

const HEX_RE = /^0x[0-9a-fA-F]*$/;

export function isHex(value: string, byteLength?: number): boolean {
  if (!HEX_RE.test(value) || value.length % 2 !== 0) return false;
  return byteLength === undefined || value.length === 2 + byteLength * 2;
}

export function bytesToHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")}`;
}

/** Decodes `0x`-prefixed hex; the caller checks the shape with `isHex` first. */
export function hexToBytes(hex: string): Uint8Array {
  const body = hex.startsWith("0x") || hex.startsWith("0X") ? hex.slice(2) : hex;
  return new Uint8Array(Buffer.from(body, "hex"));
}
