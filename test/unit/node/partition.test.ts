import assert from "node:assert/strict";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pino } from "pino";
import { PartitionFilter, parsePartition, watchPartitionFile } from "../../../src/node/partition.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the test partition file (CHAIN_NODE_TEST_PARTITION_FILE)", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-partition-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("parses an absent or empty file as no partition, an array of ids as the cut, anything else as an error", () => {
    assert.deepEqual(parsePartition(undefined), []);
    assert.deepEqual(parsePartition("  \n"), []);
    assert.deepEqual(parsePartition('["12D3KooWa","12D3KooWb"]'), ["12D3KooWa", "12D3KooWb"]);
    for (const bad of ["{}", "[1]", '"x"', "[", "null"]) assert.throws(() => parsePartition(bad), bad);
  });

  it("applies each change of the file, and nothing once stopped; unset, it watches nothing", async () => {
    const path = join(dir, "cut.json");
    const seen: string[][] = [];
    const log = pino({ level: "silent" });
    assert.equal(watchPartitionFile(undefined, () => assert.fail("no file to watch"), log)(), undefined);
    const stop = watchPartitionFile(path, (ids) => seen.push([...ids]), log);
    try {
      writeFileSync(path, '["a","b"]');
      await sleep(500);
      writeFileSync(path, "not json"); // ignored: the cut stays
      await sleep(500);
      unlinkSync(path);
      await sleep(500);
    } finally {
      stop();
    }
    writeFileSync(path, '["c"]');
    await sleep(500);
    assert.deepEqual(seen, [["a", "b"], []]);
  });

  it("as a peer filter: allows all but the cut peers, and tells its listeners of each cut until removed", () => {
    const filter = new PartitionFilter();
    let changes = 0;
    const stopListening = filter.onChange(() => changes++);
    assert.equal(filter.allows("a"), true, "no partition yet");
    filter.cutOff(["a", "b"]);
    assert.deepEqual(
      ["a", "b", "c"].map((id) => filter.allows(id)),
      [false, false, true],
    );
    filter.cutOff([]);
    assert.equal(filter.allows("a"), true, "healed");
    stopListening();
    filter.cutOff(["c"]);
    assert.equal(changes, 2, "the listener heard the two cuts made while registered");
  });
});
