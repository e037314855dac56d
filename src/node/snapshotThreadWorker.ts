/**
 * The thread of SnapshotThread: writes each snapshot it is asked for from a read transaction of
 * its own on the node's environment, so that the node's event loop goes on making blocks and
 * answering while the chunks are encoded, hashed and written.
 */
import { parentPort, workerData } from "node:worker_threads";
import { armFailpoint } from "../faults/index.ts";
import { openSnapshotSource } from "../storage/index.ts";
import { loadGenesis } from "./home.ts";
import { SnapshotAbortedError, writeSnapshotFile } from "./snapshotFile.ts";
import type { SnapshotReply, SnapshotRequest, SnapshotThreadData } from "./snapshotThread.ts";

const port = parentPort;
if (port === null) throw new Error("snapshotThreadWorker runs as a worker thread");
const { home, data, genesisHash, failpoint, chunkTargetBytes, stop } = workerData as SnapshotThreadData;
// A test's failpoint is armed per thread: the one inside the snapshot's write fires here.
armFailpoint(failpoint);
const genesis = loadGenesis(home);
const source = openSnapshotSource(data);

const reply = (message: SnapshotReply): void => port.postMessage(message);

port.on("message", async (request: SnapshotRequest | { close: true }) => {
  if ("close" in request) {
    await source.close();
    process.exit(0);
  }
  const { id, height, path } = request;
  const view = source.snapshotView();
  try {
    reply({ id, opened: view.head ?? -1 });
    // A block written as part of a range (sync) is committed with the blocks after it.
    if (view.head !== height) return reply({ id, skipped: view.head ?? -1 });
    const manifest = await writeSnapshotFile(view, genesis, path, {
      aborted: () => Atomics.load(stop, 0) === 1,
      ...(chunkTargetBytes === undefined ? {} : { chunkTargetBytes }),
      ...(genesisHash === undefined ? {} : { genesisHash }),
    });
    reply({ id, written: { chunks: manifest.chunks.length, leaves: manifest.leaf_count } });
  } catch (error) {
    if (error instanceof SnapshotAbortedError) reply({ id, aborted: true });
    else reply({ id, error: error instanceof Error ? error.message : String(error) });
  } finally {
    view.done();
  }
});
reply({ ready: true });
