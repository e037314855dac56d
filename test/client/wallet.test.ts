import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type Client,
  type ConfirmedTransaction,
  connect,
  TransactionRejectedError,
  type Wallet,
} from "../../src/client/index.ts";
import { accountAt, CHAIN_ID, DEV_BALANCE, submit, transfer } from "../rpc/support.ts";
import { signTx, startTestNode, type TestNode, transferBody } from "../helpers/testNode.ts";
import { countingFetch, startClientNode, WAIT } from "./support.ts";

/** Asserts a committed transaction succeeded, naming it on failure. */
function assertSucceeded(tx: ConfirmedTransaction, what: string): void {
  assert.deepEqual(tx.result, { code: 0 }, `${what} executed without failure`);
}

describe("wallet on a dev node committing every 50 ms", () => {
  let t: TestNode;
  let client: Client;
  before(async () => {
    ({ t, client } = await startClientNode());
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("transfers, waits for the commit, and moves exactly the amount", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const wallet = client.wallet(alice.privateKey);
    assert.equal(wallet.address, alice.address, "the wallet's address is the key's EIP-55 address");

    const hash = await wallet.transfer(bob.address, 12_345);
    const tx = await client.waitForTransaction(hash, WAIT);
    assertSucceeded(tx, "the transfer");
    assert.equal(tx.hash, hash);
    assert.equal(tx.address, alice.address);
    assert.equal(tx.nonce, 0, "the first ordered transaction of a fresh account carries nonce 0");
    assert.ok(tx.block_number >= 1, `committed in block ${tx.block_number}`);
    assert.equal(tx.operation.value, 12_345);
    assert.match(tx.operation.ref, new RegExp(`^/transfer/${alice.address}/${bob.address}/[^/]+/value$`));

    assert.equal(await client.getBalance({ address: alice.address }), DEV_BALANCE - 12_345);
    assert.equal(await client.getBalance({ address: bob.address }), DEV_BALANCE + 12_345);
    assert.equal(await client.getNonce({ address: alice.address }), 1);
  });

  it("counts nonces locally over sequential and concurrent sends", async () => {
    const [carol, dave] = [accountAt(t, 3), accountAt(t, 4)];
    const wallet = client.wallet(carol.privateKey);
    const hashes: string[] = [];
    for (let i = 0; i < 3; i++) hashes.push(await wallet.transfer(dave.address, 10 + i));
    // Sends issued together still get consecutive nonces (a wallet sends one at a time).
    hashes.push(...(await Promise.all([1, 2, 3].map((n) => wallet.transfer(dave.address, 100 * n)))));

    const committed = await Promise.all(hashes.map((hash) => client.waitForTransaction(hash, WAIT)));
    assert.deepEqual(
      committed.map((tx) => tx.nonce),
      [0, 1, 2, 3, 4, 5],
      "nonces in send order, none skipped or repeated",
    );
    committed.forEach((tx, i) => {
      assertSucceeded(tx, `send ${i}`);
    });
    assert.equal(await client.getNonce({ address: carol.address }), 6);
    assert.equal(await client.getBalance({ address: dave.address }), DEV_BALANCE + 10 + 11 + 12 + 600);
  });

  it("stakes, unstakes and writes user data", async () => {
    const erin = accountAt(t, 5);
    const wallet = client.wallet(erin.privateKey);
    const staked = await client.waitForTransaction(await wallet.stake(5_000), WAIT);
    assertSucceeded(staked, "the stake");
    assert.match(staked.operation.ref, new RegExp(`^/staking/${erin.address}/[^/]+/value$`));
    assert.equal(await client.getConsensusStakeAmount({ address: erin.address }), 5_000);

    const unstaked = await client.waitForTransaction(await wallet.unstake(2_000), WAIT);
    assertSucceeded(unstaked, "the unstake");
    assert.equal(unstaked.operation.value, -2_000, "an unstake writes a negative amount");
    assert.equal(await client.getConsensusStakeAmount({ address: erin.address }), 3_000);
    assert.equal(await client.getBalance({ address: erin.address }), DEV_BALANCE - 3_000);

    const profile = { name: "Erin", tags: ["a", "b"] };
    const written = await client.waitForTransaction(await wallet.setUserData("/profile", profile), WAIT);
    assertSucceeded(written, "the user data write");
    assert.equal(written.operation.ref, `/users/${erin.address}/profile`);
    assert.deepEqual(written.operation.value, profile);
    assert.equal(written.nonce, 2, "stake, unstake and data share one nonce sequence");
  });

  it("sends a batch with consecutive nonces, admitted at once", async () => {
    const [frank, alice] = [accountAt(t, 6), accountAt(t, 1)];
    const wallet = client.wallet(frank.privateKey);
    const hashes = await wallet.sendBatch([
      { ref: `/users/${frank.address}/batch/a`, value: 1 },
      { ref: `/transfer/${frank.address}/${alice.address}/batch-key/value`, value: 7 },
      { ref: `/users/${frank.address}/batch/b`, value: null },
    ]);
    assert.equal(hashes.length, 3);
    const committed = await Promise.all(hashes.map((hash) => client.waitForTransaction(hash, WAIT)));
    assert.deepEqual(
      committed.map((tx) => tx.nonce),
      [0, 1, 2],
    );
    assert.equal(
      new Set(committed.map((tx) => tx.block_number)).size,
      1,
      "an atomic batch lands in one block",
    );
    // The next single send continues the count.
    const next = await client.waitForTransaction(await wallet.setUserData("after", true), WAIT);
    assert.equal(next.nonce, 3);
  });

  it("sends unordered transactions (nonce -1) without touching the count", async () => {
    const grace = accountAt(t, 7);
    const wallet = client.wallet(grace.privateKey);
    const unordered = await client.waitForTransaction(
      await wallet.setUserData("u", 1, { unordered: true, parentTxHash: `0x${"ab".repeat(32)}` }),
      WAIT,
    );
    assert.equal(unordered.nonce, -1);
    assert.equal(unordered.parent_tx_hash, `0x${"ab".repeat(32)}`, "parent_tx_hash is carried as signed");
    const ordered = await client.waitForTransaction(await wallet.setUserData("o", 2), WAIT);
    assert.equal(ordered.nonce, 0);
  });

  it("surfaces a transfer beyond the balance as TransactionRejectedError insufficient_balance", async () => {
    const [henry, alice] = [accountAt(t, 8), accountAt(t, 1)];
    const wallet = client.wallet(henry.privateKey);
    await assert.rejects(wallet.transfer(alice.address, DEV_BALANCE + 1), (error: unknown) => {
      assert.ok(error instanceof TransactionRejectedError, `got ${String(error)}`);
      assert.equal(error.code, -32003);
      assert.equal(error.reason, "insufficient_balance");
      assert.equal(error.expected, DEV_BALANCE + 1, "data.expected is the amount");
      assert.equal(error.actual, DEV_BALANCE, "data.actual is what is available");
      assert.equal(error.method, "chain_sendSignedTransaction");
      return true;
    });
    // The refused send did not use its nonce: the next one carries 0.
    const ok = await client.waitForTransaction(await wallet.transfer(alice.address, 1), WAIT);
    assert.equal(ok.nonce, 0);
  });

  it("surfaces a write to a forbidden path as permission_denied", async () => {
    const wallet = client.wallet(accountAt(t, 9).privateKey);
    const balanceRef = `/account/${wallet.address}/balance`;
    for (const ref of [balanceRef, "/somewhere/else", `/users/${accountAt(t, 1).address}/not-mine`]) {
      await assert.rejects(wallet.send({ ref, value: 1 }), (error: unknown) => {
        assert.ok(error instanceof TransactionRejectedError, `${ref}: got ${String(error)}`);
        assert.equal(error.reason, "permission_denied", ref);
        return true;
      });
    }
    // A transfer key may be written once: reusing it is refused too.
    const to = accountAt(t, 2).address;
    await client.waitForTransaction(await wallet.transfer(to, 1, { key: "once" }), WAIT);
    await assert.rejects(wallet.transfer(to, 1, { key: "once" }), { reason: "permission_denied" });
  });

  it("refuses bad input before signing", async () => {
    const wallet = client.wallet(accountAt(t, 1).privateKey);
    await assert.rejects(wallet.transfer("0x1234", 1), TypeError);
    for (const amount of [0, -5, 1.5, Number.NaN, 2 ** 53]) {
      await assert.rejects(wallet.transfer(accountAt(t, 2).address, amount), RangeError, `amount ${amount}`);
      await assert.rejects(wallet.stake(amount), RangeError, `stake ${amount}`);
      await assert.rejects(wallet.unstake(amount), RangeError, `unstake ${amount}`);
    }
    for (const key of ["0x12", `0x${"00".repeat(32)}`, "not hex", new Uint8Array(31)]) {
      assert.throws(() => client.wallet(key), TypeError, `private key ${String(key)}`);
    }
  });
});

describe("wallet on a dev node whose next block is a minute away", () => {
  let t: TestNode;
  let client: Client;
  let wallet: Wallet;
  const counter = countingFetch();
  before(async () => {
    t = await startTestNode({ blockTimeMs: 60_000 });
    client = connect(t.url, { fetch: counter.fetch });
    // The genesis is old, so the first transaction commits at once (block 1); what follows stays
    // pending for a minute, so chain_getNonce cannot advance under the wallet.
    await client.waitForTransaction(
      await submit(t, transfer(accountAt(t, 9), accountAt(t, 8).address, 1)),
      WAIT,
    );
    wallet = client.wallet(accountAt(t, 1).privateKey);
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("asks chain_getNonce once, then counts pending transactions itself", async () => {
    const to = accountAt(t, 2).address;
    const hashes = [
      await wallet.transfer(to, 1),
      await wallet.transfer(to, 2),
      await wallet.setUserData("x", 3),
    ];
    assert.equal(counter.count("chain_getNonce"), 1, "one chain_getNonce for three sends");
    assert.equal(counter.count("net_chainId"), 1, "the chain id is asked once");
    const pending = await client.getPendingTransactions();
    assert.deepEqual(
      pending.filter((p) => p.address === wallet.address).map((p) => [p.hash, p.nonce]),
      hashes.map((hash, i) => [hash, i]),
    );
    assert.equal(
      await client.getNonce({ address: wallet.address }),
      0,
      "nothing of this account is committed",
    );
  });

  it("resynchronizes when another sender used its next nonce (nonce_too_low), and sends again", async () => {
    const alice = accountAt(t, 1);
    // Nonce 3 goes out behind the wallet's back; the wallet's count still says 3.
    await submit(
      t,
      signTx(alice.privateKey, transferBody(alice.address, accountAt(t, 3).address, 5, 3), CHAIN_ID),
    );
    const hash = await wallet.setUserData("after-resync", true);
    const tx = await client.getTransactionByHash({ hash });
    assert.ok(tx !== null && "status" in tx, "the resent transaction is pending");
    assert.equal(tx.nonce, 4, "sent again with the nonce the node expected");
  });

  it("asks the node again after resetNonce", async () => {
    const asked = counter.count("chain_getNonce");
    wallet.resetNonce();
    // chain_getNonce says 0 (all pending); the node's nonce_too_low names 5, and the wallet resends.
    const hash = await wallet.setUserData("after-reset", 1);
    assert.equal(counter.count("chain_getNonce"), asked + 1);
    assert.equal((await client.getTransactionByHash({ hash }))?.nonce, 5);
  });

  it("rejects waitForTransaction on timeout, saying the transaction is still pending", async () => {
    const hash = await wallet.setUserData("never-soon", 1);
    const started = Date.now();
    await assert.rejects(client.waitForTransaction(hash, { timeoutMs: 150, pollMs: 20 }), {
      name: "WaitTimeoutError",
      hash,
      pending: true,
    });
    const waited = Date.now() - started;
    assert.ok(waited >= 150 && waited < 2_000, `waited ${waited} ms for a 150 ms timeout`);
  });
});
