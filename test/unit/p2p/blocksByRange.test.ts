import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { encodeFrame } from "../../../src/p2p/framing.ts";
import { BLOCKS_BY_RANGE_PROTOCOL, P2pError, type P2pErrorReason } from "../../../src/p2p/index.ts";
import { json } from "../../helpers/p2pRawPeer.ts";
import { knows, P2PTestNet, testStatus, waitFor } from "../../helpers/p2pNet.ts";

const BLOCKS = Array.from({ length: 30 }, (_, n) => ({ number: n, hash: `h${n}` }));

const failsWith =
  (reason: P2pErrorReason) =>
  (err: unknown): boolean => {
    assert.ok(err instanceof P2pError, `expected a P2pError, got ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    return true;
  };

describe("p2p blocks by range", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("returns what serveBlocks gives, clipped to the server's maxBlocksPerRequest", async () => {
    const server = await net.start({ blocks: BLOCKS, maxBlocksPerRequest: 10 });
    const client = await net.start({ bootstrap: [server.addr] });
    await waitFor("handshaken", () => knows(client, server) && knows(server, client));
    const id = server.net.peerId;
    assert.deepEqual(await client.net.requestBlocks(id, 3, 5), BLOCKS.slice(3, 6));
    assert.deepEqual(await client.net.requestBlocks(id, 7, 7), [BLOCKS[7]]);
    assert.deepEqual(await client.net.requestBlocks(id, 0, 1000), BLOCKS.slice(0, 10), "clipped to 10");
    assert.deepEqual(server.servedRanges.at(-1), [0, 9], "serveBlocks saw the clipped range");
    assert.deepEqual(await client.net.requestBlocks(id, 25, 40), BLOCKS.slice(25, 30), "stops at the head");
    assert.deepEqual(await client.net.requestBlocks(id, 100, 105), [], "beyond the head");
    assert.equal(client.net.peerCount(), 1, "no penalty for honest answers");

    await assert.rejects(client.net.requestBlocks(id, 5, 4), failsWith("invalid_argument"));
    await assert.rejects(client.net.requestBlocks(id, -1, 4), failsWith("invalid_argument"));
    await assert.rejects(client.net.requestBlocks(id, 0.5, 4), failsWith("invalid_argument"));
    await assert.rejects(client.net.requestBlocks(client.net.peerId, 0, 1), failsWith("not_connected"));
  });

  it("cuts an answer to maxMessageBytes on the server", async () => {
    const big = Array.from({ length: 10 }, (_, n) => ({ n, pad: "x".repeat(500) }));
    const server = await net.start({ blocks: big, maxMessageBytes: 2048 });
    const client = await net.start({ bootstrap: [server.addr] });
    await waitFor("handshaken", () => knows(client, server));
    const got = await client.net.requestBlocks(server.net.peerId, 0, 9);
    assert.ok(got.length >= 1 && got.length < 10, `got ${got.length} of 10 items`);
    assert.deepEqual(got, big.slice(0, got.length));
    assert.ok(JSON.stringify(got).length <= 2048);
  });

  it("survives malformed requests and penalizes their sender", async () => {
    // A short timeout for the truncated frame (the server waits for the rest until then).
    const server = await net.start({ blocks: BLOCKS, requestTimeoutMs: 300 });
    const cases: [string, Uint8Array][] = [
      ["not JSON", encodeFrame(new TextEncoder().encode("{from: 1"))],
      ["from > to", encodeFrame(json({ from: 5, to: 1 }))],
      ["negative", encodeFrame(json({ from: -1, to: 1 }))],
      ["not integers", encodeFrame(json({ from: 1.5, to: 2 }))],
      ["strings", encodeFrame(json({ from: "1", to: "2" }))],
      ["extra member", encodeFrame(json({ from: 1, to: 2, all: true }))],
      ["an array", encodeFrame(json([1, 2]))],
      ["claims a 1 GiB body", new Uint8Array([0x40, 0, 0, 0, 1, 2, 3])],
      ["a truncated frame", new Uint8Array([0, 0, 0, 9, 0x7b])],
    ];
    for (const [what, bytes] of cases) {
      const raw = await net.startRaw({ statusAnswer: json(testStatus()), topicsOf: testStatus() });
      await raw.connect(server.addr);
      await waitFor(`server admits the raw peer (${what})`, () =>
        server.net.peers().some((p) => p.id === raw.peerId),
      );
      assert.equal(await raw.send(server.addr, BLOCKS_BY_RANGE_PROTOCOL, bytes), "reset", what);
      if (what !== "a truncated frame") {
        await waitFor(`server drops the raw peer (${what})`, () => raw.connectionCount() === 0, 3000);
      }
    }
    // Still serving honest peers.
    const client = await net.start({ bootstrap: [server.addr] });
    await waitFor("handshaken", () => knows(client, server));
    assert.deepEqual(await client.net.requestBlocks(server.net.peerId, 1, 2), BLOCKS.slice(1, 3));
  });

  for (const [what, options, reason] of [
    ["not an array", { blocksAnswer: json({ blocks: [] }) }, "bad_message"],
    ["more items than heights", { blocksAnswer: json([1, 2, 3, 4]) }, "bad_message"],
    ["not JSON", { blocksAnswer: new TextEncoder().encode("[1,") }, "bad_message"],
    ["larger than maxMessageBytes", { blocksAnswer: json(["x".repeat(70_000)]) }, "message_too_large"],
    [
      "a frame claiming 4 GiB",
      { blocksAnswer: json([1]), blocksAnswerClaimedLength: 0xffff_ffff },
      "message_too_large",
    ],
  ] as const) {
    it(`throws ${reason} on an answer that is ${what}, and penalizes the peer`, async () => {
      const client = await net.start({ requestTimeoutMs: 300 });
      const raw = await net.startRaw({
        statusAnswer: json(testStatus()),
        topicsOf: testStatus(),
        ...options,
      });
      await raw.connect(client.addr);
      await waitFor("client admits the raw peer", () => client.net.peers().some((p) => p.id === raw.peerId));
      await assert.rejects(client.net.requestBlocks(raw.peerId, 1, 2), failsWith(reason));
      assert.equal(client.net.peerCount(), 0, "the peer was dropped");
      await waitFor("the raw peer is disconnected", () => raw.connectionCount() === 0, 3000);
    });
  }
  it("does not ban a peer that answers late; drops it after repeated silence", async () => {
    // A busy honest validator answers late: banning it would take it out of consensus under load.
    const client = await net.start({ requestTimeoutMs: 300 });
    const raw = await net.startRaw({
      statusAnswer: json(testStatus()),
      topicsOf: testStatus(),
      blocksAnswer: "silent",
    });
    await raw.connect(client.addr);
    await waitFor("client admits the raw peer", () => client.net.peers().some((p) => p.id === raw.peerId));
    await assert.rejects(client.net.requestBlocks(raw.peerId, 1, 2), failsWith("timeout"));
    assert.equal(client.net.peerCount(), 1, "one late answer: still connected");
    await assert.rejects(client.net.requestBlocks(raw.peerId, 1, 2), failsWith("timeout"));
    await assert.rejects(client.net.requestBlocks(raw.peerId, 1, 2), failsWith("timeout"));
    await waitFor("the silent peer is dropped", () => raw.connectionCount() === 0, 3000);
    await raw.connect(client.addr);
    await waitFor("dropped, not banned: it may reconnect", () =>
      client.net.peers().some((p) => p.id === raw.peerId),
    );
  });
});
