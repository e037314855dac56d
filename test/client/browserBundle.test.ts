import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import vm from "node:vm";
import type { ProofResult } from "../../src/client/index.ts";
import { toChecksumAddress } from "../../src/crypto/index.ts";
import { buildState, proofResult } from "./proofSupport.ts";

/**
 * The explorer verifies proofs in the browser with this same verifier. Bundled for a browser by
 * esbuild (tsx's own dependency) from the client's public surface, it must leave every Node-only
 * module out (package.json `sideEffects: false` lets the bundler drop src/crypto's secp256k1.ts,
 * which loads a native addon through node:module) and run where there is no Buffer, process,
 * require or WebAssembly: a bare V8 context with only TextEncoder and TextDecoder, which every
 * browser has.
 */

const run = promisify(execFile);
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const ESBUILD = join(REPO, "node_modules/.bin/esbuild");

const ENTRY = `
import { getVerifiedValue, hashBlockHeader, ProofVerificationError, verifyProof } from ${JSON.stringify(join(REPO, "src/client/index.ts"))};
globalThis.verifier = { getVerifiedValue, hashBlockHeader, ProofVerificationError, verifyProof };
`;

interface BundledVerifier {
  verifyProof(stateRoot: string, result: ProofResult): unknown;
  hashBlockHeader(header: unknown): string;
  getVerifiedValue(methods: unknown, ref: string, options: unknown): Promise<{ value: unknown }>;
}

describe("the verifier in a browser bundle", () => {
  let dir: string;
  let bundle: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "chain-node-bundle-"));
    writeFileSync(join(dir, "entry.ts"), ENTRY);
    // node:module stays external: esbuild resolves every import before it drops unused modules.
    const args = [
      "entry.ts",
      "--bundle",
      "--platform=browser",
      "--format=iife",
      "--external:node:module",
      "--outfile=out.js",
    ];
    await run(ESBUILD, args, { cwd: dir, timeout: 60_000 });
    bundle = readFileSync(join(dir, "out.js"), "utf8");
  });
  after(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("leaves out every Node-only module", () => {
    assert.doesNotMatch(bundle, /node:module|__require\(|createRequire/, "nothing loads a Node module");
    assert.doesNotMatch(bundle, /\/\/ src\/crypto\/(secp256k1|signature|mnemonic)\.ts/, "no signing code");
  });

  it("verifies proofs and hashes headers where there is no Buffer, process, require or WebAssembly", async () => {
    const context = vm.createContext({ TextEncoder, TextDecoder });
    // As under the explorer's Content-Security-Policy, which allows no WebAssembly compilation:
    // keccak256 then stays with @noble/hashes.
    vm.runInContext("delete globalThis.WebAssembly", context);
    vm.runInContext(bundle, context, { filename: "out.js" });
    assert.equal(
      vm.runInContext("typeof Buffer + typeof process + typeof require + typeof WebAssembly", context),
      "undefinedundefinedundefinedundefined",
    );
    const verifier = (context as { verifier: BundledVerifier }).verifier;

    const ref = `/users/${toChecksumAddress(`0x${"12".repeat(20)}`)}/name`;
    const state = await buildState([
      [ref, "ann"],
      ["/other", 1],
    ]);
    const result = await proofResult(state, ref);
    assert.equal(verifier.verifyProof(state.root, result), "ann");
    assert.equal(verifier.verifyProof(state.root, await proofResult(state, "/none")), null);
    assert.throws(
      () => verifier.verifyProof(state.root, { ...result, value: "bob" }),
      (error: unknown) =>
        (error as { name?: string; reason?: string }).name === "ProofVerificationError" &&
        (error as { reason?: string }).reason === "value_mismatch",
    );
    const header = {
      parent_hash: "",
      number: 0,
      timestamp: 1,
      proposer: `0x${"00".repeat(20)}`,
      transactions_hash: `0x${"00".repeat(32)}`,
      state_root: state.root,
      last_commit_hash: "",
      size: 2,
    };
    const { hashBlockHeader } = await import("../../src/client/index.ts");
    const hash = hashBlockHeader({ ...header, hash: "", validators: [] });
    assert.equal(verifier.hashBlockHeader(header), hash);

    // The whole verified read, with the page's own calls to the node in place of connect().
    const block = { ...header, hash, validators: [], transactions: [] };
    const methods = {
      getBlockByHash: async () => block,
      getBlockByNumber: async () => block,
      getProof: async () => ({ ...result, block_number: 0, block_hash: hash }),
    };
    const read = await verifier.getVerifiedValue(methods, ref, { trusted_block_hash: hash });
    assert.equal(read.value, "ann");
  });
});
