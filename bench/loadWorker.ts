/**
 * The load generator, always run as its own process (never inside a server under test): one
 * autocannon run with a warm-up, printing one JSON line of results on stdout.
 *
 * Usage: node --import tsx bench/loadWorker.ts '<LoadSpec JSON>'
 *  - fixed:     the same request body every time (or, with `bodiesFile`, its bodies in turn); every
 *               response must equal `expectBody` exactly (autocannon counts others as mismatches), so
 *               an error answer cannot pass as load.
 *  - presigned: each request carries the next unused body of `bodiesFile` (a JSON array of request
 *               bodies, from index `offset`); a response counts as admitted when it carries a `result`
 *               (a hash; for batch bodies an array of hashes, counted as `txsPerBody` transactions);
 *               others are counted by their `data.reason`, else by their error message.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";

export type LoadSpec =
  | (Common & { mode: "fixed"; body: string; expectBody: string; bodiesFile?: string })
  | (Common & { mode: "presigned"; bodiesFile: string; offset?: number; txsPerBody?: number });

interface Common {
  url: string;
  connections: number;
  durationS: number;
  warmupS: number;
}

export interface LoadResult {
  /** Responses completed in the measured phase (after warm-up). */
  requests: number;
  durationS: number;
  /** requests / durationS. */
  rps: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  mismatches: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** CPU this load process used in the measured phase, % of one core (near 100: the load is the limit). */
  loadCpuPct: number;
  /** presigned only: responses with a `result`, their rate, and the reasons of the others. */
  admitted?: number;
  admittedPerS?: number;
  rejected?: Record<string, number>;
  /** presigned only: the bodies ran out before the duration ended (the run stopped early). */
  exhausted?: boolean;
  /** presigned only: index of the first body not sent (a repeated run starts there). */
  bodiesUsed?: number;
}

const HEADERS = { "content-type": "application/json" };

function run(options: autocannon.Options): { done: Promise<autocannon.Result>; stop: () => void } {
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(options, (error: unknown, result) => (error ? reject(error) : resolve(result)));
  });
  return { done, stop: () => instance?.stop() };
}

/** Runs `phase` and returns its result with the CPU this process spent in it, % of one core. */
async function measured(phase: () => Promise<autocannon.Result>): Promise<LoadResult> {
  console.log("phase measured"); // the bench samples the server's CPU at these two lines
  const before = process.cpuUsage();
  const result = await phase();
  const used = process.cpuUsage(before);
  console.log("phase end");
  return { ...summarize(result), loadCpuPct: (used.user + used.system) / 1e4 / result.duration };
}

function summarize(result: autocannon.Result): Omit<LoadResult, "loadCpuPct"> {
  return {
    requests: result.requests.total,
    durationS: result.duration,
    rps: result.requests.total / result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
  };
}

async function fixed(spec: Extract<LoadSpec, { mode: "fixed" }>): Promise<LoadResult> {
  const common = {
    url: spec.url,
    connections: spec.connections,
    pipelining: 1,
  };
  if (spec.bodiesFile === undefined) {
    const base = { ...common, method: "POST" as const, headers: HEADERS, body: spec.body };
    const options = { ...base, expectBody: spec.expectBody };
    if (spec.warmupS > 0) await run({ ...options, duration: spec.warmupS }).done;
    return measured(() => run({ ...options, duration: spec.durationS }).done);
  }
  // autocannon's expectBody cannot be combined with per-request bodies: the answers are compared
  // here instead, and every one that differs counts as a mismatch as expectBody would count it.
  const bodies = JSON.parse(readFileSync(spec.bodiesFile, "utf8")) as string[];
  let next = 0;
  let mismatches = 0;
  const requests: autocannon.Request[] = [
    {
      method: "POST",
      headers: HEADERS,
      setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] as string }),
      onResponse: (_status, body) => {
        if (body !== spec.expectBody) mismatches++;
      },
    },
  ];
  if (spec.warmupS > 0) await run({ ...common, requests, duration: spec.warmupS }).done;
  mismatches = 0;
  const result = await measured(() => run({ ...common, requests, duration: spec.durationS }).done);
  return { ...result, mismatches };
}

async function presigned(spec: Extract<LoadSpec, { mode: "presigned" }>): Promise<LoadResult> {
  const bodies = JSON.parse(readFileSync(spec.bodiesFile, "utf8")) as string[];
  let next = spec.offset ?? 0;
  let exhausted = false;
  let counting = false;
  let admitted = 0;
  let mainStart = 0;
  let lastAdmitted = 0;
  const rejected: Record<string, number> = {};
  let current: { stop: () => void } | undefined;

  const request: autocannon.Request = {
    method: "POST",
    headers: HEADERS,
    setupRequest: (req) => {
      if (next >= bodies.length) {
        // Out of unused transactions: autocannon stops at its next 1 s tick, and until then the
        // last body goes out again. Those answers (already_known) are not counted, and the rate is
        // taken up to the last admission instead of over the whole duration.
        if (!exhausted) {
          exhausted = true;
          current?.stop();
        }
        return { ...req, body: bodies[bodies.length - 1] as string };
      }
      return { ...req, body: bodies[next++] as string };
    },
    onResponse: (status, body) => {
      if (!counting) return;
      if (status === 200 && (body.includes('"result":"0x') || body.includes('"result":["0x'))) {
        admitted += body.includes('"result":["0x') ? (spec.txsPerBody ?? 1) : 1;
        lastAdmitted = performance.now();
        return;
      }
      if (exhausted) return;
      // Our node's reason code; a peer's (ganache's) error message where there is none.
      const reason =
        /"reason":"([a-z_]+)"/.exec(body)?.[1] ??
        /"message":"([^"]{1,100})/.exec(body)?.[1] ??
        `http_${status}`;
      rejected[reason] = (rejected[reason] ?? 0) + 1;
    },
  };
  const base = { url: spec.url, connections: spec.connections, pipelining: 1, requests: [request] };
  if (spec.warmupS > 0) {
    const warmup = run({ ...base, duration: spec.warmupS });
    current = warmup;
    await warmup.done;
  }
  counting = true;
  mainStart = performance.now();
  const result = await measured(() => {
    const main = run({ ...base, duration: spec.durationS });
    current = main;
    return main.done;
  });
  counting = false;
  return {
    ...result,
    admitted,
    admittedPerS:
      exhausted && admitted > 0
        ? admitted / ((lastAdmitted - mainStart) / 1000)
        : admitted / result.durationS,
    rejected,
    exhausted,
    bodiesUsed: next,
  };
}

const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
const result = spec.mode === "fixed" ? await fixed(spec) : await presigned(spec);
console.log(JSON.stringify(result));
