import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpHandler } from "../rpc/index.ts";
import { bundleVerifier } from "./explorerVerifier.ts";

/**
 * The block explorer (src/explorer/): static files served on the RPC port, and the client's proof
 * verifier bundled for the browser (explorerVerifier.ts). The page talks to the node only through
 * the public JSON-RPC (POST /) and the WebSocket (/ws), exactly as any other client would, so it
 * needs nothing from the node but these files.
 */

const ASSET_DIR = new URL("../explorer/", import.meta.url);
const JAVASCRIPT = "text/javascript; charset=utf-8";

/** URL path → file in src/explorer/ and its content type. */
const ASSETS: Readonly<Record<string, readonly [file: string, contentType: string]>> = {
  "/explorer": ["index.html", "text/html; charset=utf-8"],
  "/explorer/style.css": ["style.css", "text/css; charset=utf-8"],
  // The page's ES modules; app.js imports the others.
  ...Object.fromEntries(
    [
      "app.js",
      "dom.js",
      "rpc.js",
      "live.js",
      "home.js",
      "charts.js",
      "chain.js",
      "account.js",
      "json.js",
      "state.js",
      "prove.js",
    ].map((file) => [`/explorer/${file}`, [file, JAVASCRIPT]]),
  ),
};

/** Where the page imports the verifier from (src/explorer/prove.js), built on first request. */
const VERIFIER_PATH = "/explorer/verifier.js";

/**
 * Only the page's own script, style and connections; no inline code, no frames, no plugins, no
 * external resources. 'self' in connect-src covers ws:// and wss:// to the same host (CSP 3).
 */
const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS = {
  "Content-Security-Policy": EXPLORER_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  // Small files read once at start: revalidating costs nothing and a new node version shows at once.
  "Cache-Control": "no-cache",
} as const;

/** Serves what `load` gives (once: the promise is kept); a failed load answers 500 with why. */
function serve(load: () => Promise<Buffer>, contentType: string): HttpHandler {
  let body: Promise<Buffer> | undefined;
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain; charset=utf-8" });
      res.end("method not allowed: use GET\n");
      return;
    }
    body ??= load();
    let bytes: Buffer;
    try {
      bytes = await body;
    } catch (error) {
      res.writeHead(500, { ...SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8" });
      res.end(`could not build ${req.url}: ${error instanceof Error ? error.message : String(error)}\n`);
      return;
    }
    res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": contentType, "Content-Length": bytes.length });
    res.end(req.method === "HEAD" ? undefined : bytes);
  };
}

/**
 * The explorer's handlers by path: the files are read now (once, at node start); the verifier
 * is built on its first request.
 */
export function explorerHandlers(): Map<string, HttpHandler> {
  const handlers = new Map<string, HttpHandler>();
  for (const [path, [file, contentType]] of Object.entries(ASSETS)) {
    const bytes = Promise.resolve(readFileSync(new URL(file, ASSET_DIR)));
    handlers.set(
      path,
      serve(() => bytes, contentType),
    );
  }
  handlers.set(VERIFIER_PATH, serve(bundleVerifier, JAVASCRIPT));
  return handlers;
}
