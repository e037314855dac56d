#!/usr/bin/env node
// Entry point for `npx chain-node`. No build step: Node's own type stripping runs the TypeScript
// sources where it can (Node ≥ 22.18 and 23.6; the sources use erasable syntax only), which starts
// 0.2–0.3 s sooner than tsx and adds no helper call per closure (docs/performance.md); older
// Node, and sources inside node_modules (which Node will not strip), go through tsx.
import { loadTypeScript } from "../src/node/loadTypeScript.mjs";

await loadTypeScript(new URL("../src/cli/main.ts", import.meta.url));
