import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { filesBelow } from "../helpers/sourceFiles.ts";

/**
 * STYLE.md §1: which layer may import which. Every cross-layer import goes through the
 * imported layer's index.ts, and the layers form no cycle.
 */
const ALLOWED: Record<string, readonly string[]> = {
  crypto: [],
  /** Test-only fault injection: imports nothing, so any layer with a durable step may mark one. */
  faults: [],
  /** The typed client ships alone (dist/): it may use crypto for signing, nothing of the node. */
  client: ["crypto"],
  chain: ["crypto", "faults"],
  storage: ["chain", "crypto", "faults"],
  txpool: ["chain", "crypto"],
  consensus: ["chain", "crypto", "faults"],
  p2p: ["crypto"],
  sync: ["chain", "consensus", "crypto"],
  rpc: ["chain", "crypto"],
  node: ["crypto", "faults", "chain", "storage", "txpool", "consensus", "sync", "p2p", "rpc"],
  cli: ["node", "crypto", "client"],
};

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

interface ImportEdge {
  /** Importing file, relative to src/. */
  file: string;
  specifier: string;
  /** Imported file, relative to src/ (relative specifiers only). */
  target: string | undefined;
}

/** Every module specifier a file names: static imports and re-exports (type-only too) and dynamic import(). */
function importsOf(path: string): ImportEdge[] {
  const info = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
  const file = relative(SRC, path).split(sep).join("/");
  return info.importedFiles.map(({ fileName: specifier }) => ({
    file,
    specifier,
    target: specifier.startsWith(".")
      ? relative(SRC, resolve(dirname(path), specifier))
          .split(sep)
          .join("/")
      : undefined,
  }));
}

const layerOf = (srcRelative: string): string => srcRelative.split("/")[0] ?? "";

const files = filesBelow(SRC);
const edges = files.flatMap(importsOf);

describe("architecture (STYLE.md §1)", () => {
  it("finds the sources and their imports", () => {
    assert.ok(files.length > 20, `expected the src/ tree, found ${files.length} files`);
    assert.ok(
      edges.some((e) => e.file === "txpool/admission.ts" && e.specifier === "../chain/index.ts"),
      "the import scanner sees txpool → chain",
    );
    assert.ok(
      edges.some((e) => e.file === "chain/index.ts" && e.specifier === "./types.ts"),
      "the import scanner sees type-only re-exports",
    );
  });

  it("puts every file in a known layer folder", () => {
    const strays = files
      .map((path) => relative(SRC, path).split(sep).join("/"))
      .filter((file) => !file.includes("/") || !(layerOf(file) in ALLOWED));
    assert.deepEqual(
      strays,
      [],
      "files outside the layers of STYLE.md §1 (add the layer to the table first)",
    );
  });

  it("imports only what the layer table allows", () => {
    const violations = edges
      .filter((e) => e.target !== undefined)
      .filter((e) => {
        const from = layerOf(e.file);
        const to = layerOf(e.target as string);
        return from !== to && !(ALLOWED[from] ?? []).includes(to);
      })
      .map(
        (e) =>
          `${e.file} imports ${e.specifier} (${layerOf(e.file)} may import: ${(ALLOWED[layerOf(e.file)] ?? []).join(", ") || "nothing in src"})`,
      );
    assert.deepEqual(violations, [], "imports the table forbids");
  });

  it("never leaves src/ through a relative import", () => {
    const escapes = edges
      .filter((e) => e.target?.startsWith(".."))
      .map((e) => `${e.file} imports ${e.specifier}`);
    assert.deepEqual(escapes, [], "relative imports that leave src/");
  });

  it("crosses layers only through the imported layer's index.ts", () => {
    const violations = edges
      .filter((e) => e.target !== undefined && layerOf(e.file) !== layerOf(e.target))
      .filter((e) => e.target !== `${layerOf(e.target as string)}/index.ts`)
      .map((e) => `${e.file} imports ${e.specifier}`);
    assert.deepEqual(violations, [], "cross-layer imports that bypass index.ts");
  });

  it("has no import cycle between layers", () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      if (e.target === undefined) continue;
      const from = layerOf(e.file);
      const to = layerOf(e.target);
      if (from === to) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)?.add(to);
    }
    const cycles: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (layer: string, trail: string[]): void => {
      if (state.get(layer) === "done") return;
      if (state.get(layer) === "visiting") {
        cycles.push([...trail.slice(trail.indexOf(layer)), layer].join(" → "));
        return;
      }
      state.set(layer, "visiting");
      for (const next of graph.get(layer) ?? []) visit(next, [...trail, layer]);
      state.set(layer, "done");
    };
    for (const layer of graph.keys()) visit(layer, []);
    assert.deepEqual(cycles, [], "layer cycles");
  });
});
