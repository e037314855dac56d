import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { clipRange, encodeBlocksResponse, parseBlocksRequest } from "../../../src/p2p/blocksByRange.ts";
import { Backoff, groupAddrs, parsePeersResponse } from "../../../src/p2p/discovery.ts";
import { decodeJson, encodeFrame, encodeJson } from "../../../src/p2p/framing.ts";
import { P2pError, topicName } from "../../../src/p2p/index.ts";
import { PeerBans } from "../../../src/p2p/peerBans.ts";
import { parsePeerStatus, statusMismatch } from "../../../src/p2p/status.ts";
import { testStatus } from "../../helpers/p2pNet.ts";

const PEER = "12D3KooWGYMFAM143akBMSGpPRK3MbvTPMDmJ5SCFzBc96qmLToB";

describe("p2p status codec", () => {
  it("accepts exactly the five members with their types", () => {
    const status = testStatus({ head_number: 9 });
    assert.deepEqual(parsePeerStatus(JSON.parse(JSON.stringify(status))), status);
    const upper = { ...status, head_hash: status.head_hash.toUpperCase().replace("0X", "0x") };
    assert.equal(parsePeerStatus(upper)?.head_hash, status.head_hash, "hashes normalized to lowercase");
  });

  it("rejects every other shape", () => {
    const good = testStatus();
    const { head_hash: _omitted, ...missing } = good;
    for (const [what, value] of [
      ["null", null],
      ["an array", [good]],
      ["a string", JSON.stringify(good)],
      ["a missing member", missing],
      ["an extra member", { ...good, peers: [] }],
      ["a negative height", { ...good, head_number: -1 }],
      ["a fractional height", { ...good, head_number: 1.5 }],
      ["an unsafe chain id", { ...good, chain_id: 2 ** 53 }],
      ["a string chain id", { ...good, chain_id: "100" }],
      ["a short hash", { ...good, genesis_hash: "0xabcd" }],
      ["a hash without 0x", { ...good, head_hash: "ab".repeat(32) }],
      ["a non-hex hash", { ...good, head_hash: `0x${"zz".repeat(32)}` }],
    ] as const) {
      assert.equal(parsePeerStatus(value), undefined, what);
    }
  });

  it("names the first difference of chain, network or genesis", () => {
    const ours = testStatus();
    assert.equal(statusMismatch(ours, testStatus({ head_number: 50 })), undefined, "heads may differ");
    assert.match(statusMismatch(ours, testStatus({ chain_id: 7 })) ?? "", /chain id 7/);
    assert.match(statusMismatch(ours, testStatus({ network_id: 2 })) ?? "", /network id 2/);
    assert.match(statusMismatch(ours, testStatus({ genesis_hash: `0x${"00".repeat(32)}` })) ?? "", /genesis/);
  });

  it("names topics after the chain, network and genesis", () => {
    assert.equal(topicName("votes", testStatus()), "/chain-node/100/1/abababababababab/votes");
    assert.notEqual(
      topicName("txs", testStatus()),
      topicName("txs", testStatus({ genesis_hash: `0x${"00".repeat(32)}` })),
    );
  });
});

describe("p2p blocks-by-range codec", () => {
  it("parses {from, to} strictly", () => {
    assert.deepEqual(parseBlocksRequest({ from: 0, to: 0 }), { from: 0, to: 0 });
    assert.deepEqual(parseBlocksRequest({ to: 9, from: 3 }), { from: 3, to: 9 });
    for (const bad of [
      null,
      [],
      { from: 1 },
      { from: 2, to: 1 },
      { from: -1, to: 1 },
      { from: 1, to: 2 ** 53 },
      { from: "1", to: 2 },
      { from: 1, to: 2, x: 0 },
    ]) {
      assert.equal(parseBlocksRequest(bad), undefined, JSON.stringify(bad));
    }
  });

  it("clips the range to the maximum", () => {
    assert.deepEqual(clipRange({ from: 5, to: 500 }, 100), { from: 5, to: 104 });
    assert.deepEqual(clipRange({ from: 5, to: 6 }, 100), { from: 5, to: 6 });
  });

  it("fits the answer in the byte limit, keeping whole items in order", () => {
    const items = [{ a: 1 }, { b: "é".repeat(10) }, { c: 3 }];
    const all = encodeBlocksResponse(items, 10, 1000);
    assert.deepEqual(decodeJson(all.body), items);
    assert.equal(all.cut, false);
    const cut = encodeBlocksResponse(items, 10, 2 + 7 + 1 + 28);
    assert.deepEqual(decodeJson(cut.body), items.slice(0, 2), "é is 2 bytes: the size counts UTF-8");
    assert.equal(cut.cut, true);
    assert.ok(cut.body.byteLength <= 38);
    assert.deepEqual(decodeJson(encodeBlocksResponse(items, 1, 1000).body), [{ a: 1 }], "item cap");
    assert.deepEqual(decodeJson(encodeBlocksResponse(items, 10, 3).body), [], "nothing fits");
  });

  it("takes no item after the first that does not fit, nor after the item cap", () => {
    let pulled = 0;
    function* lazy() {
      for (let i = 0; i < 100; i++) {
        pulled += 1;
        yield { i, pad: "x".repeat(20) };
      }
    }
    // Each item is 36 bytes of JSON: two fit in 100 with the brackets and a comma.
    const cut = encodeBlocksResponse(lazy(), 100, 100);
    assert.equal(cut.count, 2);
    assert.equal(cut.cut, true);
    assert.equal(pulled, 3, "the two that fit and the one that did not");
    pulled = 0;
    const capped = encodeBlocksResponse(lazy(), 2, 10_000);
    assert.deepEqual([capped.count, capped.cut, pulled], [2, false, 2]);
  });
});

describe("p2p framing", () => {
  it("prefixes a 4-byte big-endian length", () => {
    assert.deepEqual([...encodeFrame(new Uint8Array([7, 8]))], [0, 0, 0, 2, 7, 8]);
  });

  it("encodes JSON and refuses what JSON cannot carry", () => {
    assert.deepEqual(decodeJson(encodeJson({ a: [1, "x"] })), { a: [1, "x"] });
    assert.throws(() => encodeJson(undefined), P2pError);
    assert.throws(() => encodeJson({ n: 1n }), P2pError);
    assert.throws(() => decodeJson(new Uint8Array([0xff, 0xfe])), P2pError);
  });
});

describe("p2p peer bans", () => {
  it("bans for the cool-down, doubling on repeat offences up to 32×", () => {
    const bans = new PeerBans(1000);
    assert.equal(bans.penalize(PEER, "a", 0), 1000);
    assert.equal(bans.isBanned(PEER, 999), true);
    assert.equal(bans.isBanned(PEER, 1000), false);
    assert.equal(bans.penalize(PEER, "b", 2000), 2000);
    assert.equal(bans.reasonOf(PEER, 2001), "b");
    let last = 0;
    for (let i = 0; i < 10; i++) last = bans.penalize(PEER, "c", 3000 + i);
    assert.equal(last, 32_000);
  });

  it("forgets offences after an hour; refusals add no strike", () => {
    const bans = new PeerBans(1000);
    bans.penalize(PEER, "a", 0);
    bans.penalize(PEER, "a", 10);
    assert.equal(bans.penalize(PEER, "a", 2 * 60 * 60 * 1000), 1000, "a fresh run of offences");
    const other = new PeerBans(1000);
    other.refuse(PEER, "other chain", 0);
    assert.equal(other.isBanned(PEER, 500), true);
    assert.equal(other.penalize(PEER, "x", 2000), 1000, "the refusal was not a strike");
    other.prune(10 * 60 * 60 * 1000);
    assert.equal(other.size, 0);
  });
});

describe("p2p discovery helpers", () => {
  it("groups addresses by peer and sets aside what names no peer", () => {
    const { peers, invalid } = groupAddrs([
      `/ip4/127.0.0.1/tcp/1/p2p/${PEER}`,
      `/ip4/10.0.0.1/tcp/2/p2p/${PEER}`,
      "/ip4/127.0.0.1/tcp/3",
      "garbage",
    ]);
    assert.equal(peers.length, 1);
    assert.equal(peers[0]?.id, PEER);
    assert.equal(peers[0]?.addrs.length, 2);
    assert.deepEqual(invalid, ["/ip4/127.0.0.1/tcp/3", "garbage"]);
  });

  it("bounds a peers answer", () => {
    assert.deepEqual(parsePeersResponse(["/ip4/1.2.3.4/tcp/1"]), ["/ip4/1.2.3.4/tcp/1"]);
    assert.equal(parsePeersResponse({}), undefined);
    assert.equal(parsePeersResponse([1]), undefined);
    assert.equal(parsePeersResponse(["x".repeat(300)]), undefined);
    assert.equal(parsePeersResponse(Array.from({ length: 300 }, () => "x")), undefined);
  });

  it("backs off exponentially and resets on success", () => {
    const backoff = new Backoff(100, 400);
    assert.equal(backoff.due(0), true);
    backoff.failed(0);
    assert.equal(backoff.due(99), false);
    assert.equal(backoff.due(100), true);
    backoff.failed(100);
    assert.equal(backoff.due(299), false);
    backoff.failed(300);
    backoff.failed(700);
    assert.equal(backoff.due(1099), false, "capped at 400");
    assert.equal(backoff.due(1100), true);
    backoff.succeeded();
    assert.equal(backoff.due(0), true);
  });
});
