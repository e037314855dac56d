import { fileURLToPath } from "node:url";
import type { Plugin } from "esbuild";

/**
 * The explorer's proof verifier: the client package's own code (getVerifiedValue in
 * src/client/verifiedRead.ts, verifyProof, and the crypto they use), bundled by esbuild into one
 * browser ES module, so the page checks a proof with exactly what a TypeScript client runs, not a
 * copy that could drift from it.
 *
 * Built on the first request for it, not at node start: most nodes never serve it, and a build
 * takes 0.25-0.45 s here (measured 2026-11-26). esbuild is the one tsx already installs (docs/decisions/004).
 */

const SRC_DIR = fileURLToPath(new URL("../", import.meta.url));

/** What the page imports from /explorer/verifier.js (src/explorer/prove.js): the client's public surface. */
const ENTRY = `export { getVerifiedValue, ProofVerificationError } from "./client/index.ts";\n`;

/**
 * hash-wasm's WebAssembly cannot compile under the explorer's CSP (script-src 'self' has no
 * 'wasm-unsafe-eval'): Chromium refuses it and fires a securitypolicyviolation for each attempt
 * (seen 2026-11-26). So the browser build gets a stand-in whose load fails at once, and
 * src/crypto/keccak.ts keeps @noble/hashes, the same function (its own fallback); the bundle is
 * 18 KB smaller (34 KB in all).
 */
const NO_WASM = `export const createKeccak = () => Promise.reject(new Error("no WebAssembly under the explorer's CSP"));`;

const browserPlugin: Plugin = {
  name: "explorer-browser",
  setup(build) {
    build.onResolve({ filter: /^hash-wasm$/ }, () => ({ path: "hash-wasm", namespace: "no-wasm" }));
    build.onLoad({ filter: /.*/, namespace: "no-wasm" }, () => ({ contents: NO_WASM, loader: "js" }));
  },
};

/** Thrown when the bundle would not run in a browser (it reaches Node built-ins or Buffer). */
class VerifierBundleError extends Error {
  override readonly name = "VerifierBundleError";
}

/** Builds the browser module; rejects with esbuild's messages when the sources do not build. */
export async function bundleVerifier(): Promise<Buffer> {
  const esbuild = await import("esbuild");
  // The build runs once (explorer.ts keeps its result): esbuild's service process (23 MB resident,
  // measured 2026-11-26) is not kept for the node's lifetime. A later esbuild call starts a new one.
  const result = await esbuild
    .build({
      stdin: { contents: ENTRY, resolveDir: SRC_DIR, sourcefile: "explorer-verifier.ts", loader: "ts" },
      bundle: true,
      write: false,
      format: "esm",
      platform: "browser",
      // What the page's other modules need already (ES2022: class fields, top-level await).
      target: "es2022",
      // package.json's "sideEffects": false lets esbuild leave out the modules the verifier does not
      // use, among them src/crypto/secp256k1.ts (a native addon through node:module). esbuild
      // resolves every import before it leaves modules out, so Node built-ins are external: one
      // still in the output is refused below, by name, and so is Node's global Buffer.
      external: ["node:*"],
      plugins: [browserPlugin],
      legalComments: "inline",
      logLevel: "silent",
    })
    .finally(() => esbuild.stop());
  const output = result.outputFiles[0];
  if (output === undefined) throw new VerifierBundleError("esbuild wrote no output");
  const builtins = output.text.match(/["']node:[a-z_/]+["']|\bBuffer\b/g);
  if (builtins !== null) {
    throw new VerifierBundleError(
      `the explorer's verifier bundle would need ${[...new Set(builtins)].join(", ")}, which a browser lacks`,
    );
  }
  return Buffer.from(output.contents);
}
