import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * GET /health and GET /ready on the RPC port, for process supervisors and load balancers
 * (Kubernetes liveness and readiness probes).
 *
 * - /health: liveness. 200 `{"status":"ok"}` whenever the process can answer HTTP at all.
 * - /ready: whether the node should get traffic. 200 when it is not syncing and, on a network,
 *   has at least one peer (without peers its view of the chain may be stale and what it accepts
 *   goes nowhere); else 503 with the reasons, so an operator sees why without reading logs.
 */

export interface ReadinessSource {
  /** True for a network node, false for a dev chain (which has no peers to need). */
  networked: boolean;
  syncing(): boolean;
  peerCount(): number;
  headNumber(): number;
}

export type NotReadyReason = "syncing" | "no_peers" | "state_sync";

export interface Readiness {
  ready: boolean;
  reasons: NotReadyReason[];
  head: number;
  peers: number;
  syncing: boolean;
}

function readiness(source: ReadinessSource): Readiness {
  const syncing = source.syncing();
  const peers = source.peerCount();
  const reasons: NotReadyReason[] = [];
  if (syncing) reasons.push("syncing");
  if (source.networked && peers === 0) reasons.push("no_peers");
  return { ready: reasons.length === 0, reasons, head: source.headNumber(), peers, syncing };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { Allow: "GET, HEAD" }).end();
    return;
  }
  const text = JSON.stringify(body);
  // Probes poll: a cached answer would hide a change of state.
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    "Cache-Control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : text);
}

export function healthHandler(): Handler {
  return (req, res) => sendJson(req, res, 200, { status: "ok" });
}

export function readyHandler(source: ReadinessSource): Handler {
  return (req, res) => {
    const state = readiness(source);
    const { ready, ...details } = state;
    sendJson(req, res, ready ? 200 : 503, { status: ready ? "ready" : "not_ready", ...details });
  };
}

/**
 * While a joining node state-syncs (node/stateSyncStart.ts), before its RPC serves: /health is
 * 200 (the process is alive and working), /ready is 503 with reason `state_sync` and the progress
 * (`progress()`, undefined before the first step), and anything else is 503 with a JSON-RPC error
 * saying why, so a client or probe sees what the node is doing rather than a refused connection.
 */
export function stateSyncHandler(progress: () => Record<string, unknown> | undefined): Handler {
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://node").pathname;
    if (path === "/health") {
      sendJson(req, res, 200, { status: "ok" });
      return;
    }
    if (path === "/ready") {
      sendJson(req, res, 503, { status: "not_ready", reasons: ["state_sync"], state_sync: progress() ?? {} });
      return;
    }
    const text = JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32603,
        message: "the node is restoring a snapshot (state sync); RPC serves once it is done",
      },
    });
    res.writeHead(503, { "Content-Type": "application/json", "Retry-After": "10" }).end(text);
  };
}
