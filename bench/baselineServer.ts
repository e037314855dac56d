/**
 * The baseline: a bare `node:http` JSON-RPC server. It reads the POST body, parses it as JSON and
 * answers a fixed body chosen by the request's `method` (the bench makes each fixed body exactly as
 * long as the node's answer to that method). No routing, validation or chain work: what is left is
 * the cost of HTTP + JSON on one event loop, the ceiling any JSON-RPC node in Node.js can reach.
 *
 * Usage: node --import tsx bench/baselineServer.ts <port> <responses.json>
 * responses.json: {"<method>": "<response body>"}. Prints "listening <port>" when ready and exits
 * when its stdin closes (so it never outlives the bench).
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const port = Number(process.argv[2]);
const file = process.argv[3];
if (!Number.isInteger(port) || file === undefined) {
  console.error("usage: baselineServer.ts <port> <responses.json>");
  process.exit(2);
}

const responses = new Map<string, Buffer>();
for (const [method, body] of Object.entries(
  JSON.parse(readFileSync(file, "utf8")) as Record<string, string>,
)) {
  responses.set(method, Buffer.from(body));
}
const notFound = Buffer.from(
  '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"unknown method"}}',
);

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let method: unknown;
    try {
      method = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method?: unknown }).method;
    } catch {
      method = undefined;
    }
    const body = (typeof method === "string" ? responses.get(method) : undefined) ?? notFound;
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(port, "127.0.0.1", () => console.log(`listening ${port}`));

const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
