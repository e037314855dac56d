import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { signBody, type VoteBody } from "../../src/consensus/index.ts";
import { generateNodeKey } from "../../src/p2p/index.ts";
import { P2PTestNet, sleep, type TestPeer } from "../helpers/p2pNet.ts";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * A real `chain-node start` validator and in-process peers that pass the handshake and then send
 * what no honest node would. Each is disconnected; the node keeps committing blocks.
 */
describe("a node among hostile peers (process)", { timeout: 120_000 }, () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-hostile-"));
  const peers = new P2PTestNet();
  let node: NodeProcess | undefined;
  let nodeAddr = "";
  let status = { chain_id: 0, network_id: 0, genesis_hash: "", head_number: 0, head_hash: "" };

  before(async () => {
    const [rpcPort, p2pPort] = [await freePort(), await freePort()];
    execFileSync(
      process.execPath,
      [
        "bin/chain-node.js",
        "init",
        "--home",
        home,
        "--rpc-port",
        String(rpcPort),
        "--p2p-port",
        String(p2pPort),
      ],
      { cwd: ROOT, stdio: "pipe" },
    );
    node = await spawnNode(["start", "--home", home, "--log-level", "warn"], rpcPort, 30_000);
    nodeAddr = /p2p\s+(\/ip4\/\S+)/.exec(node.output())?.[1] ?? "";
    assert.ok(nodeAddr, node.output());
    const genesis = await rpc<{ hash: string }>(node.url, "chain_getBlockByNumber", { number: 0 });
    status = {
      chain_id: await rpc<number>(node.url, "net_chainId"),
      network_id: await rpc<number>(node.url, "net_id"),
      genesis_hash: genesis.hash,
      head_number: 0,
      head_hash: genesis.hash,
    };
  });
  after(async () => {
    await peers.stopAll();
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  async function connectedPeer(): Promise<TestPeer> {
    const peer = await peers.start({ status, bootstrap: [nodeAddr], nodeKey: generateNodeKey() });
    await waitFor(
      "the hostile peer to be admitted",
      async () => (peer.net.peerCount() === 1 ? true : undefined),
      10_000,
    );
    return peer;
  }

  async function assertDropped(peer: TestPeer, what: string): Promise<void> {
    await waitFor(
      `${what}: the sender disconnected`,
      async () => (peer.net.peerCount() === 0 ? true : undefined),
      10_000,
    );
    await sleep(500);
    assert.equal(peer.net.peerCount(), 0, `${what}: and not let back in`);
  }

  it("keeps a peer that behaves (the control for the cases below)", async () => {
    const quiet = await connectedPeer();
    await sleep(3000); // more than a status refresh
    assert.equal(quiet.net.peerCount(), 1, "still connected");
    await quiet.net.stop();
  });

  it("drops a peer gossiping a malformed vote", async () => {
    const peer = await connectedPeer();
    peer.net.publish("votes", { vote: { type: "prevote" }, signature: "0x00" });
    await assertDropped(peer, "malformed vote");
  });

  it("drops a peer gossiping a vote signed by a key outside the validator set", async () => {
    const peer = await connectedPeer();
    const height = (await rpc<number>(node?.url ?? "", "chain_getRecentBlockNumber")) + 1;
    const vote: VoteBody = { type: "prevote", chain_id: status.chain_id, height, round: 0, block_hash: "" };
    const outsider = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
    peer.net.publish("votes", { vote, signature: signBody(vote, outsider) });
    await assertDropped(peer, "vote with a foreign signature");
  });

  it("drops a peer gossiping a transaction whose signature does not verify", async () => {
    const peer = await connectedPeer();
    const transaction = {
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: "/users/0x0000000000000000000000000000000000000001/x", value: 1 },
    };
    peer.net.publish("txs", { txs: [{ transaction, signature: `0x${"11".repeat(97)}` }] });
    await assertDropped(peer, "transaction with a bad signature");
  });

  it("drops a peer gossiping a malformed bundle of transactions", async () => {
    const peer = await connectedPeer();
    peer.net.publish("txs", { txs: [], note: "an empty bundle" });
    await assertDropped(peer, "empty transaction bundle");
  });

  it("keeps committing blocks through all of it", async () => {
    const url = node?.url ?? "";
    const head = await rpc<number>(url, "chain_getRecentBlockNumber");
    await waitFor(
      "two more blocks",
      async () => ((await rpc<number>(url, "chain_getRecentBlockNumber")) >= head + 2 ? true : undefined),
      20_000,
    );
    assert.equal(await rpc(url, "net_peerCount"), 0);
  });
});
