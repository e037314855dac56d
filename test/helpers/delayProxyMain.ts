import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { type DelayProxyOptions, type LinkChange, startDelayProxy } from "./delayProxy.ts";

/**
 * The delay proxy as its own process, so that it can run inside a namespaced host:
 *
 *   ip netns exec NS node --import tsx test/helpers/delayProxyMain.ts \
 *     --listen 10.1.2.2:7000 --target 10.1.2.3:7000 --delay-ms 50 --jitter-ms 10 --jitter normal
 *
 * or `--config '{"listenHost":…}'` (DelayProxyOptions as JSON; flags given beside it win). Prints
 * `listening HOST:PORT` once it accepts connections; SIGTERM or SIGINT closes it. Each line on
 * stdin is a JSON LinkChange (e.g. `{"delayMs":150,"jitterMs":20}`) applied at once, answered
 * with `shaped <the line>` (or `reshape failed: <why>`).
 */

const { values } = parseArgs({
  options: {
    config: { type: "string" },
    listen: { type: "string" },
    target: { type: "string" },
    "delay-ms": { type: "string" },
    "jitter-ms": { type: "string" },
    jitter: { type: "string" },
    "bandwidth-bytes-per-second": { type: "string" },
    "burst-bytes": { type: "string" },
    "max-queue-bytes": { type: "string" },
    seed: { type: "string" },
  },
});

function hostPort(flag: string, text: string): [string, number] {
  const at = text.lastIndexOf(":");
  const port = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port)) throw new Error(`--${flag} must be HOST:PORT, got ${text}`);
  return [text.slice(0, at), port];
}

const options = { ...(values.config === undefined ? {} : JSON.parse(values.config)) } as DelayProxyOptions;
if (values.listen !== undefined) [options.listenHost, options.listenPort] = hostPort("listen", values.listen);
if (values.target !== undefined) [options.targetHost, options.targetPort] = hostPort("target", values.target);
if (values.jitter !== undefined) options.jitter = values.jitter as "uniform" | "normal"; // checked by the proxy
const numbers = {
  "delay-ms": "delayMs",
  "jitter-ms": "jitterMs",
  "bandwidth-bytes-per-second": "bandwidthBytesPerSecond",
  "burst-bytes": "burstBytes",
  "max-queue-bytes": "maxQueueBytes",
  seed: "seed",
} as const;
for (const [flag, key] of Object.entries(numbers)) {
  const text = values[flag as keyof typeof numbers];
  if (text !== undefined) options[key] = Number(text);
}

const proxy = await startDelayProxy(options);
process.stdout.write(`listening ${options.listenHost}:${proxy.port}\n`);
createInterface({ input: process.stdin }).on("line", (line) => {
  try {
    proxy.reshape(JSON.parse(line) as LinkChange);
    process.stdout.write(`shaped ${line}\n`);
  } catch (error) {
    process.stdout.write(`reshape failed: ${String(error)}\n`);
  }
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void proxy.close().then(() => process.exit(0));
  });
}
