import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { METHOD_LIST } from "../../src/rpc/index.ts";

/**
 * docs/rpc.md is generated (scripts/genRpcDocs.ts) from the method table. This keeps it from
 * silently falling behind: every method of the table (rpc/routes.ts) has its section, and no section names a
 * method the table no longer has. Regenerate with
 * `npm run docs:rpc`.
 */
const DOC = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/rpc.md");

describe("docs/rpc.md", () => {
  const names = METHOD_LIST.map((m) => m.name);
  const doc = readFileSync(DOC, "utf8");
  const sections = [...doc.matchAll(/^### ((?:chain|net)_\w+|rpc\.discover)$/gm)].map((match) => match[1]);
  const regenerate = "run `npm run docs:rpc`";

  it("lists the method table", () => {
    assert.ok(names.length > 20, `expected the whole method table, got ${names.length} methods`);
  });

  it("has a section for every method of the table", () => {
    for (const name of names) {
      assert.ok(doc.includes(name), `docs/rpc.md does not mention ${name}: ${regenerate}`);
      assert.ok(sections.includes(name), `docs/rpc.md has no "### ${name}" section: ${regenerate}`);
    }
  });

  it("documents no method the table does not have, in the table's order", () => {
    assert.deepEqual(sections, names, `docs/rpc.md sections differ from the method table: ${regenerate}`);
  });
});
