#!/usr/bin/env node
// Entry point for `npx chain-node`: runs the TypeScript CLI through tsx, so no build step is needed.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
