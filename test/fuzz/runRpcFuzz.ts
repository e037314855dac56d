import assert from "node:assert/strict";
import fc from "fast-check";
import {
  batchArb,
  checkHttpReply,
  checkOversizeReply,
  checkReply,
  createTarget,
  httpInputArb,
  type KnownValues,
  loadMethodSpecs,
  MAX_BODY_BYTES,
  type MethodSpec,
  methodCallArb,
  rawBodyArb,
  requestArb,
  rpcResult,
  type RpcTarget,
} from "./rpcArbitraries.ts";

/**
 * The RPC fuzz properties and how many inputs each gets, shared by test/rpc/fuzz.test.ts and
 * scripts/fuzzRpc.ts. Each property sends its inputs one by one over a keep-alive connection to
 * a real node and checks every reply (rpcArbitraries.ts). No input carries a valid signature, so
 * every one of them must leave the chain exactly as it was: the caller snapshots the state
 * around the whole run.
 */

export interface FuzzProperty {
  name: string;
  /** Share of the total input count. */
  weight: number;
  /** Cap on inputs whatever the total (for expensive inputs such as 5 MiB bodies). */
  max?: number;
  build(context: FuzzContext): fc.IAsyncProperty<[never]>;
}

export interface FuzzContext {
  target: RpcTarget;
  specs: readonly MethodSpec[];
  byName: ReadonlyMap<string, MethodSpec>;
  known: KnownValues;
}

/** Builds an async property from an arbitrary and a check of one input. */
const property = <T>(arbitrary: fc.Arbitrary<T>, run: (input: T) => Promise<void>) =>
  fc.asyncProperty(arbitrary, run) as unknown as fc.IAsyncProperty<[never]>;

let oversize: Buffer | undefined;

export const RPC_FUZZ_PROPERTIES: readonly FuzzProperty[] = [
  {
    name: "raw bodies (random bytes, truncated JSON, 10,000-deep nesting, huge numbers, duplicate keys)",
    weight: 35,
    build: ({ target, specs, byName, known }) =>
      property(rawBodyArb(specs, known), async ({ body }) =>
        checkReply(body, await target.send(body), byName),
      ),
  },
  {
    name: "single requests (ids of every type, wrong or missing jsonrpc, any method and params)",
    weight: 20,
    build: ({ target, specs, byName, known }) =>
      property(requestArb(specs, known), async (request) => {
        const body = JSON.stringify(request) ?? "null";
        checkReply(body, await target.send(body), byName);
      }),
  },
  {
    name: "every method with valid or mutated params",
    weight: 30,
    build: ({ target, specs, byName, known }) =>
      property(fc.tuple(methodCallArb(specs, known), fc.integer()), async ([call, id]) => {
        const request: Record<string, unknown> = { jsonrpc: "2.0", id, method: call.method };
        if (call.params !== undefined) request.params = call.params;
        const body = JSON.stringify(request);
        checkReply(body, await target.send(body), byName);
      }),
  },
  {
    name: "batches of 0 to 103 items, with notifications",
    weight: 10,
    build: ({ target, specs, byName, known }) =>
      property(batchArb(specs, known), async (batch) => {
        const body = JSON.stringify(batch);
        checkReply(body, await target.send(body), byName);
      }),
  },
  {
    name: "HTTP methods, paths and content types",
    weight: 5,
    build: ({ target, specs, byName, known }) =>
      property(httpInputArb(specs, known), async (input) => {
        const options = { method: input.method, path: input.path, contentType: input.contentType };
        checkHttpReply(input, await target.send(input.body, options), byName);
      }),
  },
  {
    name: "bodies over the 5 MiB limit (with Content-Length and chunked)",
    weight: 0.1,
    max: 24,
    build: ({ target }) =>
      property(fc.tuple(fc.integer({ min: 1, max: 64 * 1024 }), fc.boolean()), async ([over, chunked]) => {
        oversize ??= Buffer.alloc(MAX_BODY_BYTES + 64 * 1024, 0x20); // one buffer for every run
        const body = oversize.subarray(0, MAX_BODY_BYTES + over);
        const reply = await target.send(body, { chunked });
        checkOversizeReply(reply, `${body.length} bytes${chunked ? " chunked" : ""}`);
      }),
  },
];

/** What the chain looks like, as far as any request could change it. */
export interface StateSnapshot {
  head: number;
  headHash: string;
  stateRoot: string;
  pending: number;
  accounts: Record<string, { balance: number; nonce: number; stake: number; validator: boolean }>;
}

export async function snapshotState(target: RpcTarget, addresses: readonly string[]): Promise<StateSnapshot> {
  const head = await rpcResult<number>(target, "chain_getRecentBlockNumber");
  const block = await rpcResult<{ hash: string; state_root: string; number: number }>(
    target,
    "chain_getBlockByNumber",
    { number: head },
  );
  const accounts: StateSnapshot["accounts"] = {};
  for (const address of addresses) {
    accounts[address] = {
      balance: await rpcResult<number>(target, "chain_getBalance", { address }),
      nonce: await rpcResult<number>(target, "chain_getNonce", { address }),
      stake: await rpcResult<number>(target, "chain_getConsensusStakeAmount", { address }),
      validator: await rpcResult<boolean>(target, "chain_isValidator", { address }),
    };
  }
  const pending = (await rpcResult<unknown[]>(target, "chain_getPendingTransactions")).length;
  return { head, headHash: block.hash, stateRoot: block.state_root, pending, accounts };
}

export interface PropertyReport {
  name: string;
  inputs: number;
  seconds: number;
  failure?: string;
}

export interface FuzzReport {
  inputs: number;
  seconds: number;
  properties: PropertyReport[];
  failures: number;
}

/** Splits `total` inputs over the properties by weight (each at least 1, capped by its max). */
export function splitRuns(total: number): number[] {
  const weights = RPC_FUZZ_PROPERTIES.reduce((sum, p) => sum + p.weight, 0);
  return RPC_FUZZ_PROPERTIES.map((p) => {
    const share = Math.max(1, Math.round((total * p.weight) / weights));
    return p.max === undefined ? share : Math.min(share, p.max);
  });
}

export interface RunOptions {
  total: number;
  seed?: number;
  /** Stop at the first failing property (CI) or go on with the next (the long script). */
  stopOnFailure: boolean;
  onProgress?: (report: PropertyReport) => void;
}

/** Sets up the context against a running node at `url` (127.0.0.1). Close the target after use. */
export async function createFuzzContext(url: string, addresses: readonly string[]): Promise<FuzzContext> {
  const target = createTarget(url);
  const specs = await loadMethodSpecs(target);
  const genesis = await rpcResult<{ hash: string }>(target, "chain_getBlockByNumber", { number: 0 });
  return {
    target,
    specs,
    byName: new Map(specs.map((s) => [s.name, s])),
    known: { blockHashes: [genesis.hash], addresses: [...addresses], txHashes: [] },
  };
}

/** Runs every property with its share of `total` inputs; returns the counts and any failures. */
export async function runRpcFuzz(context: FuzzContext, options: RunOptions): Promise<FuzzReport> {
  const started = performance.now();
  const runs = splitRuns(options.total);
  const properties: PropertyReport[] = [];
  for (const [index, fuzzProperty] of RPC_FUZZ_PROPERTIES.entries()) {
    const numRuns = runs[index] ?? 1;
    const propertyStarted = performance.now();
    const details = await fc.check(fuzzProperty.build(context), {
      numRuns,
      ...(options.seed === undefined ? {} : { seed: options.seed + index }),
      endOnFailure: false,
    });
    const report: PropertyReport = {
      name: fuzzProperty.name,
      inputs: details.numRuns + details.numShrinks,
      seconds: (performance.now() - propertyStarted) / 1000,
    };
    if (details.failed) {
      const cause =
        details.errorInstance instanceof Error
          ? details.errorInstance.message
          : String(details.errorInstance);
      report.failure = `${fc.defaultReportMessage(details) ?? "failed"}\n${cause}`;
    }
    properties.push(report);
    options.onProgress?.(report);
    if (details.failed && options.stopOnFailure) break;
  }
  return {
    inputs: properties.reduce((sum, p) => sum + p.inputs, 0),
    seconds: (performance.now() - started) / 1000,
    properties,
    failures: properties.filter((p) => p.failure !== undefined).length,
  };
}

/** The node still answers after the run (it did not crash or wedge). */
export async function assertStillServing(target: RpcTarget): Promise<void> {
  const head = await rpcResult<number>(target, "chain_getRecentBlockNumber");
  assert.ok(
    Number.isSafeInteger(head) && head >= 0,
    `chain_getRecentBlockNumber answers after the run: ${head}`,
  );
}
