#!/usr/bin/env node
// Entry point for `npx chain-node`. No build step: Node's own type stripping runs the TypeScript
// sources where it can (Node ≥ 22.18 and 23.6; the sources use erasable syntax only), which starts
// 0.2–0.3 s sooner than tsx and adds no helper call per closure (docs/performance.md); older
// Node, and sources inside node_modules (which Node will not strip), go through tsx.
import { enableCompileCache } from "node:module";
import { loadTypeScript } from "../src/node/loadTypeScript.mjs";

// V8's compiled code for every module loaded from here on is kept on disk (NODE_COMPILE_CACHE, or
// a node-compile-cache folder in the system's temporary directory) and reused by the next start:
// a dev node answered RPC about 0.3 s sooner, with 0.4 s less CPU (docs/performance.md, docs/
// configuration.md "Start-up cache"). A cache that cannot be written is skipped, not an error.
enableCompileCache?.();

await loadTypeScript(new URL("../src/cli/main.ts", import.meta.url));
