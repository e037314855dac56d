/**
 * A worker of SignatureWorkers: answers each message of jobs with their results, in order, on the
 * port it came from. Bulk messages (a block sync's) come on the parent port; interactive ones
 * (admission's) on their own port, and are answered between any 16 checks of a bulk message
 * instead of after every bulk message sent before them.
 */
import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { checkSignedHash, type SignedHashJob } from "../crypto/index.ts";

/** A message of either port: the jobs of one batch, answered as `{ id, results }`. */
interface JobsMessage {
  id: number;
  jobs: SignedHashJob[];
}

/** Checks between two looks at the interactive port (about 1 ms). */
const POLL_EVERY = 16;

const bulk = parentPort;
const data = workerData as { interactive?: MessagePort; stop?: Int32Array } | null;
const interactive = data?.interactive;
const stop = data?.stop;
if (bulk === null || interactive === undefined || stop === undefined)
  throw new Error("signatureWorker runs as a worker thread");

/**
 * Exits if the pool is closing (SignatureWorkers.close sets the flag, then wakes us with an empty
 * message): it has checked our unanswered jobs itself. Called before every check, so that the
 * thread exits from here, between two checks, and is never terminated inside the native secp256k1
 * addon (which aborts the process).
 */
const exitIfStopping = (): void => {
  if (Atomics.load(stop, 0) === 1) process.exit(0);
};

const answer = (port: MessagePort, { id, jobs }: JobsMessage) => {
  const results = [];
  for (const job of jobs) {
    exitIfStopping();
    results.push(checkSignedHash(job));
  }
  port.postMessage({ id, results });
};

function answerInteractive(port: MessagePort): void {
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) {
    answer(port, received.message as JobsMessage);
  }
}

interactive.on("message", (message: JobsMessage) => answer(interactive, message));
bulk.on("message", ({ id, jobs }: JobsMessage) => {
  exitIfStopping(); // the wake message has no jobs
  const results = [];
  for (let i = 0; i < jobs.length; i++) {
    if (i % POLL_EVERY === 0) answerInteractive(interactive);
    exitIfStopping();
    results.push(checkSignedHash(jobs[i] as SignedHashJob));
  }
  bulk.postMessage({ id, results });
});
