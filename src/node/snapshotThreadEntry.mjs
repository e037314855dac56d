// Worker entry of SnapshotThread. Workers do not share the parent's module loader, so the
// TypeScript sources are loaded here the way the CLI loads them (loadTypeScript.mjs).
import { enableCompileCache } from "node:module";
import { loadTypeScript } from "./loadTypeScript.mjs";

enableCompileCache?.();

await loadTypeScript(new URL("./snapshotThreadWorker.ts", import.meta.url));
