import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";

const LOADER = pathToFileURL(join(import.meta.dirname, "../../../src/node/loadTypeScript.mjs")).href;

/** Runs `node` (no tsx) that loads `file` through loadTypeScript and prints what it exports. */
function loadInChild(file: string): { status: number | null; stdout: string; stderr: string } {
  const script = `import { loadTypeScript } from ${JSON.stringify(LOADER)};
const mod = await loadTypeScript(new URL(${JSON.stringify(pathToFileURL(file).href)}));
console.log(mod.answer(20));`;
  // cwd is the repository, so the fallback finds tsx in its node_modules.
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    cwd: join(import.meta.dirname, "../../.."),
    timeout: 30_000,
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe("loadTypeScript (the CLI's and the signature workers' way to run the sources)", () => {
  it("loads TypeScript with Node's type stripping, and through tsx from inside node_modules", () => {
    const dir = mkdtempSync(join(tmpdir(), "chain-node-load-"));
    try {
      const source = "export const answer = (n: number): number => n + 22;\n";
      const plain = join(dir, "plain.ts");
      writeFileSync(plain, source);
      const nested = join(dir, "node_modules", "pkg", "nested.ts");
      // An installed package, as chain-node is when a project depends on it.
      mkdirSync(join(dir, "node_modules", "pkg"), { recursive: true });
      writeFileSync(join(dir, "node_modules", "pkg", "package.json"), '{"name":"pkg","type":"module"}');
      writeFileSync(nested, source);
      for (const file of [plain, nested]) {
        const run = loadInChild(file);
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.stdout.trim(), "42", file);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
