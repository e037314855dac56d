import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestDeadlines } from "../../../src/p2p/deadlines.ts";
import { P2pError } from "../../../src/p2p/index.ts";
import { sleep } from "../../helpers/p2pNet.ts";

const reasonOf = (controller: AbortController): string | undefined =>
  controller.signal.reason instanceof P2pError ? controller.signal.reason.reason : undefined;

describe("p2p request deadlines", () => {
  it("aborts with a timeout after the deadline, unless untracked first", async () => {
    const deadlines = new RequestDeadlines(20);
    const late = deadlines.track();
    const done = deadlines.track();
    deadlines.untrack(done);
    assert.equal(deadlines.size, 1);
    await sleep(60);
    assert.equal(reasonOf(late), "timeout");
    assert.equal(done.signal.aborted, false, "an untracked request is not aborted");
    assert.equal(deadlines.size, 0, "a fired deadline is forgotten");
  });

  it("aborts everything in flight at stop, with not_running", () => {
    const deadlines = new RequestDeadlines(60_000);
    const all = [deadlines.track(), deadlines.track()];
    deadlines.abortAll();
    assert.deepEqual(all.map(reasonOf), ["not_running", "not_running"]);
    assert.equal(deadlines.size, 0);
  });
});
