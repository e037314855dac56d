import { connect, createServer, type Socket } from "node:net";

/**
 * A tiny TCP echo server and ping client, run as processes inside namespaced hosts (netns.ts):
 *
 *   tcpProbeMain.ts serve HOST PORT             echo server; prints `listening HOST:PORT`
 *   tcpProbeMain.ts ping HOST PORT COUNT MS     COUNT sequential 8-byte round trips on one
 *                                               connection, each within MS; prints
 *                                               {"rtts":[ms…]} or {"error":"…"} (exit 1)
 */

const [mode, host = "", portText = "", countText = "1", timeoutText = "2000"] = process.argv.slice(2);
const port = Number(portText);

function serve(): void {
  const server = createServer({ noDelay: true }, (socket) => {
    socket.on("error", () => {}); // a peer cut off or reset: nothing to do
    socket.pipe(socket);
  });
  server.listen(port, host, () => process.stdout.write(`listening ${host}:${port}\n`));
}

function roundTrip(socket: Socket, timeoutMs: number): Promise<number> {
  const sentAt = performance.now();
  return new Promise((resolve, reject) => {
    let got = 0;
    const timer = setTimeout(() => reject(new Error(`no echo within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      got += chunk.length;
      if (got < 8) return;
      clearTimeout(timer);
      socket.removeListener("data", onData);
      resolve(performance.now() - sentAt);
    };
    socket.on("data", onData);
    socket.write(Buffer.alloc(8));
  });
}

async function ping(): Promise<void> {
  const timeoutMs = Number(timeoutText);
  const socket = connect({ host, port, noDelay: true, timeout: timeoutMs });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
      socket.once("timeout", () => reject(new Error(`no connection within ${timeoutMs} ms`)));
    });
    socket.setTimeout(0);
    const rtts: number[] = [];
    for (let i = 0; i < Number(countText); i++) rtts.push(await roundTrip(socket, timeoutMs));
    process.stdout.write(`${JSON.stringify({ rtts })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
    process.exitCode = 1;
  } finally {
    socket.destroy();
  }
}

if (mode === "serve") serve();
else if (mode === "ping") await ping();
else throw new Error(`usage: tcpProbeMain.ts serve|ping HOST PORT [COUNT TIMEOUT_MS]`);
