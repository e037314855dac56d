// The container's HEALTHCHECK (Dockerfile): exit 0 when GET /ready on this node's RPC port
// answers 200, 1 otherwise. Plain Node (fetch): slim images have no curl.
//
// It reads the port and host from the same CHAIN_NODE_RPC_* variables the node reads (they beat
// config.toml, so they are what the node listens on). A listener on 0.0.0.0 or :: is asked on
// loopback. The answer's body (the reasons when not ready) is printed: `docker inspect` keeps it.
const TIMEOUT_MS = 4_000; // under the HEALTHCHECK --timeout (5 s), so a hung node fails here, with a message

const port = process.env.CHAIN_NODE_RPC_PORT ?? "8545";
const host = process.env.CHAIN_NODE_RPC_HOST ?? "127.0.0.1";
const probeHost = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "[::1]" : host;
const url = `http://${probeHost.includes(":") && !probeHost.startsWith("[") ? `[${probeHost}]` : probeHost}:${port}/ready`;

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  console.log(`${response.status} ${await response.text()}`);
  process.exit(response.status === 200 ? 0 : 1);
} catch (error) {
  console.log(`${url}: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
