import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { TestNode } from "../helpers/testNode.ts";
import { accountAt, DEV_BALANCE } from "../rpc/support.ts";
import { buildState, proofResult } from "./proofSupport.ts";
import { startClientNode } from "./support.ts";

/**
 * `chain-node/client` as a consumer sees it: the compiled dist/ (built here with the package's
 * own build:client), loaded by plain Node without tsx, from the repo (package self-reference)
 * and from a project outside it, and type-checked through the export's "types".
 */

const run = promisify(execFile);
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");
/** The environment of a plain Node process: no loader hooks inherited from this test run. */
const PLAIN_ENV = { ...process.env, NODE_OPTIONS: "" };
const BUILD_TIMEOUT_MS = 60_000;

/** Runs plain `node` (this test's binary, without tsx) and returns its stdout. */
async function node(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd, env: PLAIN_ENV, timeout: 30_000 });
  return stdout.trim();
}

const CONSUMER_SCRIPT = `
import { connect, TransactionRejectedError } from "chain-node/client";
const [url, key, to] = process.argv.slice(2);
const client = connect(url);
const wallet = client.wallet(key);
const tx = await client.waitForTransaction(await wallet.transfer(to, 42), { timeoutMs: 5000, pollMs: 20 });
let reason;
try {
  await wallet.transfer(to, 2 ** 52);
} catch (error) {
  reason = error instanceof TransactionRejectedError ? error.reason : String(error);
}
const balance = await client.getBalance({ address: to });
console.log(JSON.stringify({ chainId: await client.getChainId(), nonce: tx.nonce, code: tx.result.code, reason, balance }));
`;

/** Verifies proof results given in a file: the value, or the failure's reason. */
const VERIFY_SCRIPT = `
import { readFileSync } from "node:fs";
import { ProofVerificationError, verifyProof } from "chain-node/client";
const { root, results } = JSON.parse(readFileSync(process.argv[2], "utf8"));
console.log(JSON.stringify(results.map((result) => {
  try {
    return { value: verifyProof(root, result) };
  } catch (error) {
    return { reason: error instanceof ProofVerificationError ? error.reason : String(error) };
  }
})));
`;

const CONSUMER_TYPES = `
import {
  type Block,
  connect,
  type JsonValue,
  type ProofResult,
  ProofVerificationError,
  type Transaction,
  TransactionRejectedError,
  verifyProof,
} from "chain-node/client";
const client = connect("http://127.0.0.1:8080");
export const recent: Promise<Block<Transaction>> = client.getRecentBlock();
export const balance: Promise<number> = client.getBalance({ address: "0x00000000000000000000000000000000000000aa" });
export const isRejection = (error: unknown): string | undefined =>
  error instanceof TransactionRejectedError ? error.reason : undefined;
export const proven = (root: string, result: ProofResult): JsonValue => verifyProof(root, result);
export const verified = client.getVerifiedValue("/users", { trusted_block_hash: "0x00" }).then((read) => read.value);
export const failedBecause = (error: unknown): string | undefined =>
  error instanceof ProofVerificationError ? error.reason : undefined;
// @ts-expect-error an unknown method does not type-check
client.request("chain_noSuchMethod");
// @ts-expect-error a missing param does not type-check
client.getBalance({});
`;

describe("chain-node/client as a package", () => {
  let t: TestNode;
  let consumer: string;
  before(async () => {
    // The same command `npm run build:client` (and `prepare`) runs.
    await run(process.execPath, [TSC, "-p", "tsconfig.client.json"], {
      cwd: REPO,
      env: PLAIN_ENV,
      timeout: BUILD_TIMEOUT_MS,
    });
    consumer = mkdtempSync(join(tmpdir(), "chain-node-consumer-"));
    ({ t } = await startClientNode());
  });
  after(async () => {
    await t?.stop();
    if (consumer !== undefined) rmSync(consumer, { recursive: true, force: true });
  });

  it("resolves by self-reference from the repo under plain Node, at ./client and at the root", async () => {
    const script =
      "const a = await import('chain-node/client'); const b = await import('chain-node');" +
      "console.log(JSON.stringify([typeof a.connect, a.connect === b.connect, typeof a.RpcError]))";
    const out = await node(["--input-type=module", "-e", script], REPO);
    assert.deepEqual(JSON.parse(out), ["function", true, "function"]);
  });

  /** What `npm install <path to this repo>` makes: a link in node_modules. */
  function linkPackage(): void {
    if (existsSync(join(consumer, "node_modules"))) return;
    mkdirSync(join(consumer, "node_modules"));
    symlinkSync(REPO, join(consumer, "node_modules/chain-node"), "dir");
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ type: "module", private: true }));
  }

  it("works from a project outside the repo: connect, transfer, wait, a typed rejection", async () => {
    linkPackage();
    writeFileSync(join(consumer, "consumer.js"), CONSUMER_SCRIPT);
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const out = await node(["consumer.js", t.url, alice.privateKey, bob.address], consumer);
    assert.deepEqual(JSON.parse(out), {
      chainId: 100,
      nonce: 0,
      code: 0,
      reason: "insufficient_balance",
      balance: DEV_BALANCE + 42,
    });
  });

  it("verifies proofs with the compiled verifier, from a project outside the repo", async () => {
    linkPackage();
    const state = await buildState([
      ["/users/a", [1, "b"]],
      ["/users/c", "d"],
    ]);
    const present = await proofResult(state, "/users/a");
    const results = [present, await proofResult(state, "/users/x"), { ...present, value: 2 }];
    writeFileSync(join(consumer, "proofs.json"), JSON.stringify({ root: state.root, results }));
    writeFileSync(join(consumer, "verify.js"), VERIFY_SCRIPT);
    const out = await node(["verify.js", "proofs.json"], consumer);
    assert.deepEqual(JSON.parse(out), [{ value: [1, "b"] }, { value: null }, { reason: "value_mismatch" }]);
  });

  it("type-checks a consumer against the export's declaration files", async () => {
    writeFileSync(join(consumer, "consumer.ts"), CONSUMER_TYPES);
    const tsconfig = {
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2023",
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        // The consumer has no node_modules/@types of its own; borrow the repo's.
        typeRoots: [join(REPO, "node_modules/@types")],
        types: ["node"],
      },
      files: ["consumer.ts"],
    };
    writeFileSync(join(consumer, "tsconfig.json"), JSON.stringify(tsconfig));
    await run(process.execPath, [TSC, "-p", consumer], {
      cwd: consumer,
      env: PLAIN_ENV,
      timeout: BUILD_TIMEOUT_MS,
    }).catch((error: { stdout?: string }) =>
      assert.fail(`the consumer does not type-check:\n${error.stdout ?? String(error)}`),
    );
  });
});
