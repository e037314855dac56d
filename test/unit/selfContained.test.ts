import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { filesBelow } from "../helpers/sourceFiles.ts";

/**
 * The repository tests itself: no file in src/, test/, bench/ or scripts/ names a path that
 * leaves the repository (a clone with nothing beside it must pass `npm test`). Every string
 * literal that reads as a relative path is resolved against its file's folder, and every absolute
 * one is compared with the folder the repository sits in; either may not land outside the root.
 * (This caught the signing tests, which read their vectors from the folder beside the repository
 * until the vectors were copied to test/vectors/.)
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["src", "test", "bench", "scripts"];
const EXTENSIONS = [".ts", ".mts", ".mjs", ".js"];

/** The text of every string literal and template piece in `source`. */
function stringsOf(source: string): string[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source);
  const out: string[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (
      kind === ts.SyntaxKind.StringLiteral ||
      kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
      kind === ts.SyntaxKind.TemplateHead
    ) {
      out.push(scanner.getTokenValue());
    }
  }
  return out;
}

const isInside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel));
};

/** The literals of `source` (a file in `dir`) that name a path outside `root`. */
export function escapingPaths(source: string, dir: string, root: string): string[] {
  const beside = dirname(root);
  return stringsOf(source).filter((text) => {
    if (/^\.\.?\//.test(text)) return !isInside(resolve(dir, text), root);
    if (text.startsWith("/")) return isInside(resolve(text), beside) && !isInside(resolve(text), root);
    return /\bshared\/(vectors|spec|DESIGN)/.test(text);
  });
}

describe("the repository is self-contained", () => {
  it("flags a path that leaves the repository, and not one that stays in it", () => {
    // The examples are put together at run time, so that this file holds none of them itself.
    const dir = join(ROOT, "test", "unit", "crypto");
    const shared = ["shared", "vectors", "signing.json"].join("/");
    const up = ["..", "..", "..", "..", shared].join("/");
    assert.deepEqual(escapingPaths(`readFileSync(new URL("${up}", import.meta.url))`, dir, ROOT), [up]);
    const absolute = `${dirname(ROOT)}/${shared}`;
    assert.deepEqual(escapingPaths(`const p = \`${absolute}\`;`, dir, ROOT), [absolute]);
    assert.deepEqual(escapingPaths(`const s = "see ${shared}";`, dir, ROOT), [`see ${shared}`]);
    const good = 'new URL("../../vectors/signing.json", import.meta.url); "/usr/bin/chromium"; "../"';
    assert.deepEqual(escapingPaths(good, dir, ROOT), []);
  });

  it("no file in src/, test/, bench/ or scripts/ names a path outside the repository", () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const top of SCANNED) {
      for (const file of filesBelow(join(ROOT, top), EXTENSIONS)) {
        scanned++;
        for (const text of escapingPaths(readFileSync(file, "utf8"), dirname(file), ROOT)) {
          offenders.push(`${relative(ROOT, file)}: ${JSON.stringify(text)}`);
        }
      }
    }
    assert.ok(scanned > 100, `expected the whole tree, scanned ${scanned} files`);
    assert.deepEqual(offenders, []);
  });
});
