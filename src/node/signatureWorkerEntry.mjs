// Worker entry of SignatureWorkers. Workers do not share the parent's module loader, so the
// TypeScript sources are loaded through tsx here, resolved from this package (not the cwd).
import { register } from "tsx/esm/api";

register();
await import("./signatureWorker.ts");
