import { rmSync } from "node:fs";
import { connect, createServer } from "node:net";

/**
 * A unix-socket → TCP forwarder, run inside a namespaced host (netns.ts) so that a test in the root
 * namespace can reach a port that listens on the host's own 127.0.0.1 (a node's RPC): the socket
 * file lives on the filesystem, which every network namespace shares.
 *
 *   unixForwardMain.ts SOCKET_PATH PORT     listens on SOCKET_PATH, pipes each connection to
 *                                           127.0.0.1:PORT; prints `listening SOCKET_PATH`
 *
 * SIGTERM or SIGINT closes it (and removes the socket file).
 */

const [socketPath = "", portText = ""] = process.argv.slice(2);
const port = Number(portText);
if (socketPath === "" || !Number.isInteger(port) || port < 1 || port > 65_535) {
  process.stderr.write("usage: unixForwardMain.ts SOCKET_PATH PORT\n");
  process.exit(2);
}

const server = createServer((client) => {
  const target = connect({ host: "127.0.0.1", port });
  // Either side failing or closing ends both: nothing to report, the caller sees its own error.
  client.on("error", () => target.destroy());
  target.on("error", () => client.destroy());
  client.pipe(target);
  target.pipe(client);
});

rmSync(socketPath, { force: true });
server.listen(socketPath, () => process.stdout.write(`listening ${socketPath}\n`));

const close = (): void => {
  server.close();
  rmSync(socketPath, { force: true });
  process.exit(0);
};
process.on("SIGTERM", close);
process.on("SIGINT", close);
