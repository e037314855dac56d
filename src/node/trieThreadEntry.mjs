// Worker entry of TrieThread. Workers do not share the parent's module loader, so the
// TypeScript sources are loaded here the way the CLI loads them (loadTypeScript.mjs).
import { enableCompileCache } from "node:module";
import { loadTypeScript } from "./loadTypeScript.mjs";

// As in bin/chain-node.js: compiled code reused across starts.
enableCompileCache?.();

await loadTypeScript(new URL("./trieThreadWorker.ts", import.meta.url));
