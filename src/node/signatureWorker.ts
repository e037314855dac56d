import { parentPort } from "node:worker_threads";
import { checkSignedHash, type SignedHashJob } from "../crypto/index.ts";

/** A worker of SignatureWorkers: answers each batch of jobs with their results, in order. */
const port = parentPort;
if (port === null) throw new Error("signatureWorker runs as a worker thread");
port.on("message", ({ id, jobs }: { id: number; jobs: SignedHashJob[] }) => {
  port.postMessage({ id, results: jobs.map(checkSignedHash) });
});
