import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { filesBelow } from "../helpers/sourceFiles.ts";

/**
 * STYLE.md's conventions that a reader trips on when they vary, checked on every file of src/:
 * one private-member style (the `private` keyword, not `#names`), one acronym style in the names
 * we declare (`RpcServer`, `P2pNetwork`, `JsonValue`: an acronym is a word, capitalised like one;
 * constants in SCREAMING_CASE excepted), and files short enough to read, or saying at their head
 * why they are not.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");
const MAX_LINES = 500;
/** What a longer file's head must say, with its reason after it. */
const LONG_FILE_MARK = "Why this file is long:";

const files = filesBelow(SRC).map((path) => ({
  name: relative(SRC, path),
  text: readFileSync(path, "utf8"),
}));

/** An identifier with an acronym in capitals beside other letters: `P2PNetwork`, `toRPCError`, `parseJSON`. */
export function hasCapitalAcronym(name: string): boolean {
  if (/^[A-Z0-9_]+$/.test(name)) return false; // a constant
  return /[A-Z]{2,}[a-z]/.test(name) || /[a-z0-9][A-Z]{2,}(?![a-z])/.test(name) || /^[A-Z]{3,}$/.test(name);
}

/** The names a file declares (types, classes, functions, variables, members), with their lines. */
function declaredNames(name: string, text: string): { name: string; line: number }[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const out: { name: string; line: number }[] = [];
  const visit = (node: ts.Node): void => {
    const declared =
      ts.isClassDeclaration(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isFunctionDeclaration(node) ||
      ts.isEnumDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isPropertyDeclaration(node) ||
      (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name));
    if (declared && node.name !== undefined && ts.isIdentifier(node.name)) {
      out.push({
        name: node.name.text,
        line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("conventions (STYLE.md)", () => {
  it("reads the sources", () => {
    assert.ok(files.length > 100, `expected src/, found ${files.length} files`);
  });

  it("uses the private keyword, never #private members", () => {
    const offenders: string[] = [];
    for (const { name, text } of files) {
      const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isPrivateIdentifier(node)) offenders.push(`${name}: ${node.text}`);
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.deepEqual(offenders, []);
  });

  it("writes acronyms in declared names as words (Rpc, Json, P2p), and the check catches capitals", () => {
    for (const bad of ["P2PNetwork", "RPCServer", "toRPCError", "parseJSON", "HTTPHandler", "JSONValue"]) {
      assert.ok(hasCapitalAcronym(bad), bad);
    }
    for (const good of [
      "P2pNetwork",
      "RpcServer",
      "toRpcError",
      "parseJson",
      "MAX_PEERS",
      "ID",
      "x",
      "Tx",
      "a2b",
    ]) {
      assert.ok(!hasCapitalAcronym(good), good);
    }
    const offenders = files.flatMap(({ name, text }) =>
      declaredNames(name, text)
        .filter((d) => hasCapitalAcronym(d.name))
        .map((d) => `${name}:${d.line} ${d.name}`),
    );
    assert.deepEqual(offenders, []);
  });

  it(`keeps files under ${MAX_LINES} lines, or says at their head why not`, () => {
    const offenders = files
      .filter(({ text }) => text.split("\n").length > MAX_LINES)
      .filter(({ text }) => !text.slice(0, 4_000).includes(LONG_FILE_MARK))
      .map(({ name, text }) => `${name} (${text.split("\n").length} lines)`);
    assert.deepEqual(offenders, []);
  });
});
