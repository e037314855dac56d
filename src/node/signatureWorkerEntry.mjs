// Worker entry of SignatureWorkers. Workers do not share the parent's module loader, so the
// TypeScript sources are loaded here the way the CLI loads them (loadTypeScript.mjs).
import { loadTypeScript } from "./loadTypeScript.mjs";

await loadTypeScript(new URL("./signatureWorker.ts", import.meta.url));
