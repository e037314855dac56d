/**
 * The history bench's server: the node's JSON-RPC server and routes over a store filled by
 * bench/historyFill.ts, and nothing else (no chain, pool or peers). The store is opened as the
 * node opens it; only read methods answer.
 *
 * Usage: node --import tsx bench/historyServer.ts <dir> <port>. Exits when its stdin closes (so
 * it never outlives the bench), or on SIGTERM.
 */
import { LmdbStore } from "../src/storage/index.ts";
import { readOnlyRoutes, serveRoutes } from "./historyStore.ts";

const [dir, portArg] = process.argv.slice(2);
const port = Number(portArg);
if (dir === undefined || !Number.isInteger(port)) {
  console.error("usage: historyServer.ts <dir> <port>");
  process.exit(2);
}

const store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 0 });
const server = await serveRoutes(readOnlyRoutes(store), port);
console.log(`listening ${port}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.close();
  await store.close();
  process.exit(0);
};
process.on("SIGTERM", () => void stop());
process.on("SIGINT", () => void stop());
process.stdin.on("end", () => void stop());
process.stdin.resume();
