import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Runs `run` with a fresh temporary directory (named `chain-node-<prefix>-…`), removed afterwards even on failure. */
export function withTempDir(prefix: string, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `chain-node-${prefix}-`));
  return run(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}
