/**
 * Child-process entry of the fuzz target: a dev node from test/helpers/testNode.ts, alone in its
 * process, so the fuzzer can read the node's own memory (/proc/PID/status) and see it crash.
 * Prints one JSON line {url, addresses, privateKeys} when it serves; stops on SIGTERM or when
 * its parent closes stdin (so a killed test never leaves it behind).
 */
import { startTestNode } from "../helpers/testNode.ts";

const pool = process.env.FUZZ_TARGET_POOL === undefined ? {} : JSON.parse(process.env.FUZZ_TARGET_POOL);
const node = await startTestNode({ pool });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await node.stop();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.resume();
process.stdout.write(
  `${JSON.stringify({
    url: node.url,
    addresses: node.accounts.map((a) => a.address),
    privateKeys: node.accounts.map((a) => a.privateKey),
  })}\n`,
);
