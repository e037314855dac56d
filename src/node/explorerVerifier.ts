import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";

/**
 * The explorer's proof verifier: the client package's own code (src/client/proof.ts and the
 * crypto it uses), bundled by esbuild into one browser ES module, so the page checks a proof with
 * exactly what a TypeScript client runs, not a copy that could drift from it.
 *
 * Built on the first request for it, not at node start: most nodes never serve it, and a build
 * costs ~0.1-0.3 s of CPU. esbuild is the one tsx already installs (docs/decisions/004).
 */

const SRC_DIR = fileURLToPath(new URL("../", import.meta.url));

/**
 * What the page imports from /explorer/verifier.js (src/explorer/prove.js), each name mapped to
 * the client's export that provides it.
 */
const ENTRY = `export { ProofVerificationError, verifyProof } from "./client/index.ts";
export { hashBlockHeader } from "./client/index.ts";
`;

/**
 * hash-wasm's WebAssembly cannot compile under the explorer's CSP (script-src 'self' has no
 * 'wasm-unsafe-eval', and the attempt is reported as a violation), so the browser build gets a
 * stand-in whose load fails at once: src/crypto/keccak.ts then keeps @noble/hashes, the same
 * function (its own fallback).
 */
const NO_WASM = `export const createKeccak = () => Promise.reject(new Error("no WebAssembly under the explorer's CSP"));`;

/**
 * src/crypto/hex.ts converts with Node's Buffer, which a browser does not have: the browser build
 * gets these same three functions over a lookup table (the Buffer versions stay on the node's hot
 * paths, where they are faster).
 */
const BROWSER_HEX = `const HEX_RE = /^0x[0-9a-fA-F]*$/;
const DIGITS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
export function isHex(value, byteLength) {
  if (!HEX_RE.test(value) || value.length % 2 !== 0) return false;
  return byteLength === undefined || value.length === 2 + byteLength * 2;
}
export function bytesToHex(bytes) {
  let out = "0x";
  for (const byte of bytes) out += DIGITS[byte];
  return out;
}
export function hexToBytes(hex) {
  const body = hex.startsWith("0x") || hex.startsWith("0X") ? hex.slice(2) : hex;
  const out = new Uint8Array(body.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(body.slice(2 * i, 2 * i + 2), 16);
  return out;
}
`;

const HEX_MODULE = resolve(SRC_DIR, "crypto/hex.ts");

const browserPlugin: Plugin = {
  name: "explorer-browser",
  setup(build) {
    build.onResolve({ filter: /^hash-wasm$/ }, () => ({ path: "hash-wasm", namespace: "no-wasm" }));
    build.onLoad({ filter: /.*/, namespace: "no-wasm" }, () => ({ contents: NO_WASM, loader: "js" }));
    build.onLoad({ filter: /[/\\]crypto[/\\]hex\.ts$/ }, (args) =>
      args.path === HEX_MODULE ? { contents: BROWSER_HEX, loader: "js" } : undefined,
    );
    // Our modules compute on import only what their exports need, so a module whose exports the
    // verifier does not use is left out whole (as package.json "sideEffects": false does for a
    // package): the crypto index also exports secp256k1 (node:module, a native binding) and
    // mnemonics, which the verifier never touches.
    build.onResolve({ filter: /^\.\.?\/.*\.ts$/ }, (args) => ({
      path: resolve(args.resolveDir, args.path),
      sideEffects: false,
    }));
  },
};

/** Thrown when the bundle would not run in a browser (it reaches Node built-ins or Buffer). */
class VerifierBundleError extends Error {
  override readonly name = "VerifierBundleError";
}

/** Builds the browser module; rejects with esbuild's messages when the sources do not build. */
export async function bundleVerifier(): Promise<Buffer> {
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    stdin: { contents: ENTRY, resolveDir: SRC_DIR, sourcefile: "explorer-verifier.ts", loader: "ts" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    // What the page's other modules need already (ES2022: class fields, top-level await).
    target: "es2022",
    // Node built-ins stay imports, so that a module left out takes its own with it; one still in
    // the output is refused below, with its name, and so is Node's global Buffer.
    external: ["node:*"],
    plugins: [browserPlugin],
    legalComments: "inline",
    logLevel: "silent",
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new VerifierBundleError("esbuild wrote no output");
  const builtins = output.text.match(/["']node:[a-z_/]+["']|\bBuffer\b/g);
  if (builtins !== null) {
    throw new VerifierBundleError(
      `the explorer's verifier bundle would import ${[...new Set(builtins)].join(", ")}`,
    );
  }
  return Buffer.from(output.contents);
}
