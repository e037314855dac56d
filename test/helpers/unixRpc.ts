import { request } from "node:http";

/**
 * JSON-RPC over a unix socket: how a test in the root namespace calls a node inside a namespaced
 * host (the socket is served by unixForwardMain.ts run in that host; files are shared by all
 * network namespaces).
 */

/** One JSON-RPC call through a unix socket; rejects on an error reply or after `timeoutMs`. */
export function unixRpc<T>(
  socketPath: string,
  method: string,
  params?: unknown,
  timeoutMs = 5_000,
): Promise<T> {
  const message: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) message.params = params;
  const body = JSON.stringify(message);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: "POST",
        path: "/",
        agent: false,
        timeout: timeoutMs,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          try {
            const reply = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
              result?: T;
              error?: unknown;
            };
            if (reply.error !== undefined) reject(new Error(`${method}: ${JSON.stringify(reply.error)}`));
            else resolve(reply.result as T);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method}: no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** GET `path` through a unix socket (e.g. a node's /metrics): the body of a 200 answer. */
export function unixGet(socketPath: string, path: string, timeoutMs = 5_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "GET", path, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`));
      });
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** `call`'s result, or undefined when it failed (a node not up yet, or cut off): for polling. */
export async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch {
    return undefined;
  }
}
