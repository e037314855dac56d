import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ConfirmedTx,
  type JsonValue,
  readValue,
  type StoredBlock,
  type Tx,
} from "../../../src/chain/index.ts";
import {
  NOTIFICATION_METHOD,
  RPC_ERROR_CODES,
  RpcError,
  SubscriptionHub,
  type SubscriptionSource,
  WEBSOCKET_ONLY_REASON,
  websocketOnlyRoutes,
} from "../../../src/rpc/index.ts";

// ---- fixtures ------------------------------------------------------------------------------------

const hex = (byte: number, bytes: number): string => `0x${byte.toString(16).padStart(2, "0").repeat(bytes)}`;
const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

function tx(byte: number): Tx {
  return {
    hash: hex(byte, 32),
    address: ALICE,
    signature: hex(0xee, 97),
    timestamp: 1_700_000_000_000 + byte,
    nonce: byte,
    operation: { type: "SET_VALUE", ref: `/transfer/${ALICE}/${BOB}/k${byte}/value`, value: 10 },
  };
}

function block(number: number, txs: readonly Tx[]): StoredBlock {
  return {
    header: {
      parent_hash: number === 0 ? "" : hex(number - 1, 32),
      number,
      timestamp: 1_700_000_000_000 + number * 1000,
      proposer: ALICE,
      transactions_hash: hex(0xaa, 32),
      state_root: hex(0xbb, 32),
      last_commit_hash: hex(0xcc, 32),
      size: 2,
    },
    hash: hex(0x40 + number, 32),
    tx_hashes: txs.map((t) => t.hash),
    validators: [ALICE],
    commit: null,
  };
}

const VALUE_LEAF_LIMIT = 3;

/** A chain and pool to point the hub at: tests move transactions between them. */
class FakeSource implements SubscriptionSource {
  readonly pending = new Map<string, Tx>();
  readonly confirmed = new Map<string, ConfirmedTx>();
  /** The head's state leaves, and its number. */
  readonly leaves = new Map<string, JsonValue>();
  head = 0;

  headValue(path: string): JsonValue {
    const reader = {
      getLeaf: (leaf: string) => this.leaves.get(leaf),
      leavesBelow: (under: string) =>
        [...this.leaves]
          .filter(([leaf]) => leaf.startsWith(`${under}/`))
          .sort(([a], [b]) => (a < b ? -1 : 1)),
    };
    return readValue(reader, path, VALUE_LEAF_LIMIT);
  }

  headNumber(): number {
    return this.head;
  }

  getConfirmedTx(hash: string): ConfirmedTx | undefined {
    return this.confirmed.get(hash);
  }

  getPending(hash: string): Tx | undefined {
    return this.pending.get(hash);
  }

  /** Commits `txs` in `b` as the chain would: stored first, then announced. */
  commit(b: StoredBlock, txs: readonly Tx[]): void {
    txs.forEach((t, index) => {
      this.pending.delete(t.hash);
      this.confirmed.set(t.hash, {
        tx: t,
        block_hash: b.hash,
        block_number: b.header.number,
        index,
        result: { code: 0 },
      });
    });
  }
}

interface Notification {
  jsonrpc: string;
  method: string;
  params: { subscription: string; result: Record<string, unknown> };
}

function setup(maxSubscriptions = 4) {
  const source = new FakeSource();
  let counter = 0;
  const hub = new SubscriptionHub(source, { maxSubscriptions }, () => `0x${(++counter).toString(16)}`);
  const received: Notification[] = [];
  const session = hub.open((text) => received.push(JSON.parse(text) as Notification));
  return { source, hub, session, received };
}

const parsed = (texts: readonly string[]): Notification[] => texts.map((t) => JSON.parse(t) as Notification);

function assertRpcError(fn: () => unknown, code: number, reason: string, label: string): void {
  assert.throws(
    fn,
    (error: unknown) => {
      assert.ok(error instanceof RpcError, `${label}: an RpcError, got ${String(error)}`);
      assert.equal(error.code, code, `${label}: code`);
      assert.equal(error.data?.reason, reason, `${label}: reason`);
      return true;
    },
    label,
  );
}

// ---- tests ---------------------------------------------------------------------------------------

describe("SubscriptionSession.subscribe params", () => {
  const { session } = setup();
  const bad: readonly [string, unknown][] = [
    ["no params", undefined],
    ["params not an object", ["newBlocks"]],
    ["params null", null],
    ["unknown topic", { topic: "logs" }],
    ["topic not a string", { topic: 1 }],
    ["unknown member", { topic: "newBlocks", from: 1 }],
    ["transaction without hash", { topic: "transaction" }],
    ["hash on newBlocks", { topic: "newBlocks", hash: hex(1, 32) }],
    ["hash on pendingTransactions", { topic: "pendingTransactions", hash: hex(1, 32) }],
    ["short hash", { topic: "transaction", hash: "0x1234" }],
    ["hash without 0x", { topic: "transaction", hash: "ab".repeat(32) }],
    ["value without ref", { topic: "value" }],
    ["ref on newBlocks", { topic: "newBlocks", ref: "/users" }],
    ["ref on transaction", { topic: "transaction", hash: hex(1, 32), ref: "/users" }],
    ["hash on value", { topic: "value", ref: "/users", hash: hex(1, 32) }],
    ["a malformed ref", { topic: "value", ref: "/a//b" }],
    ["an empty ref", { topic: "value", ref: "" }],
  ];
  for (const [label, params] of bad) {
    it(`refuses ${label} with -32602`, () => {
      assertRpcError(() => session.subscribe(params), RPC_ERROR_CODES.invalidParams, "invalid_params", label);
    });
  }

  it("holds nothing after refusals", () => {
    assert.equal(session.size, 0);
  });
});

describe("subscription ids and limits", () => {
  it("gives each subscription a new id from the hub", () => {
    const { session } = setup();
    assert.deepEqual(session.subscribe({ topic: "newBlocks" }), { id: "0x1", initial: [] });
    assert.deepEqual(session.subscribe({ topic: "newBlocks" }), { id: "0x2", initial: [] });
    assert.equal(session.size, 2);
  });

  it("makes random 16-byte hex ids by default", () => {
    const hub = new SubscriptionHub(new FakeSource(), { maxSubscriptions: 2 });
    const session = hub.open(() => {});
    const a = session.subscribe({ topic: "newBlocks" }).id;
    const b = session.subscribe({ topic: "newBlocks" }).id;
    assert.match(a, /^0x[0-9a-f]{32}$/);
    assert.notEqual(a, b);
  });

  it("refuses one subscription past the limit with -32005 too_many_subscriptions, and frees a slot on unsubscribe", () => {
    const { session } = setup(3);
    const ids = [
      session.subscribe({ topic: "newBlocks" }).id,
      session.subscribe({ topic: "pendingTransactions" }).id,
      session.subscribe({ topic: "transaction", hash: hex(9, 32) }).id,
    ];
    assertRpcError(
      () => session.subscribe({ topic: "newBlocks" }),
      RPC_ERROR_CODES.limitExceeded,
      "too_many_subscriptions",
      "4th subscription",
    );
    assert.equal(session.unsubscribe({ subscription: ids[1] }), true);
    assert.equal(session.subscribe({ topic: "newBlocks" }).id, "0x4");
  });

  it("counts the limit per connection, not per node", () => {
    const { hub, session } = setup(1);
    session.subscribe({ topic: "newBlocks" });
    const other = hub.open(() => {});
    assert.equal(other.subscribe({ topic: "newBlocks" }).id, "0x2");
  });

  it("unsubscribes once: true, then false; unknown or another connection's ids are false", () => {
    const { hub, session } = setup();
    const id = session.subscribe({ topic: "newBlocks" }).id;
    const other = hub.open(() => {});
    assert.equal(other.unsubscribe({ subscription: id }), false, "another connection's id");
    assert.equal(session.unsubscribe({ subscription: id }), true);
    assert.equal(session.unsubscribe({ subscription: id }), false, "twice");
    assert.equal(session.unsubscribe({ subscription: "0xnope" }), false, "unknown");
    assertRpcError(
      () => session.unsubscribe({ subscription: 7 }),
      RPC_ERROR_CODES.invalidParams,
      "invalid_params",
      "id not a string",
    );
    assertRpcError(() => session.unsubscribe({}), RPC_ERROR_CODES.invalidParams, "invalid_params", "no id");
  });
});

describe("newBlocks", () => {
  it("notifies each subscription with the block as chain_getBlockByNumber returns it without full transactions", () => {
    const { hub, session, received } = setup();
    const a = session.subscribe({ topic: "newBlocks" }).id;
    const b = session.subscribe({ topic: "newBlocks" }).id;
    const t = tx(1);
    const committed = block(5, [t]);
    hub.publishBlock(committed);
    assert.equal(received.length, 2);
    assert.deepEqual(
      received.map((n) => n.params.subscription),
      [a, b],
    );
    const first = received[0] as Notification;
    assert.equal(first.jsonrpc, "2.0");
    assert.equal(first.method, NOTIFICATION_METHOD);
    assert.deepEqual(first.params.result, {
      timestamp: committed.header.timestamp,
      hash: committed.hash,
      parent_hash: committed.header.parent_hash,
      number: 5,
      proposer: ALICE,
      validators: [ALICE],
      size: 2,
      transactions_hash: committed.header.transactions_hash,
      state_root: committed.header.state_root,
      last_commit_hash: committed.header.last_commit_hash,
      transactions: [t.hash],
    });
    assert.ok(!("id" in first), "a notification has no id");
  });

  it("stops after unsubscribe and after the session closes", () => {
    const { hub, session, received } = setup();
    const id = session.subscribe({ topic: "newBlocks" }).id;
    session.unsubscribe({ subscription: id });
    hub.publishBlock(block(1, []));
    assert.equal(received.length, 0, "after unsubscribe");
    session.subscribe({ topic: "newBlocks" });
    session.close();
    hub.publishBlock(block(2, []));
    assert.equal(received.length, 0, "after close");
    assert.equal(hub.sessionCount, 0);
    assert.equal(session.size, 0);
  });
});

describe("pendingTransactions", () => {
  it("notifies each admitted transaction as chain_getPendingTransactions lists it", () => {
    const { hub, session, received } = setup();
    const id = session.subscribe({ topic: "pendingTransactions" }).id;
    const [t1, t2] = [tx(1), tx(2)];
    hub.publishPending([t1, t2]);
    assert.deepEqual(
      received.map((n) => n.params),
      [t1, t2].map((t) => ({
        subscription: id,
        result: {
          status: "PENDING",
          hash: t.hash,
          address: t.address,
          signature: t.signature,
          timestamp: t.timestamp,
          nonce: t.nonce,
        },
      })),
    );
  });

  it("leaves out a transaction a block already took", () => {
    const { source, hub, session, received } = setup();
    session.subscribe({ topic: "pendingTransactions" });
    const [t1, t2] = [tx(1), tx(2)];
    source.commit(block(1, [t1]), [t1]);
    hub.publishPending([t1, t2]);
    assert.deepEqual(
      received.map((n) => n.params.result.hash),
      [t2.hash],
    );
  });

  it("does not send blocks to pendingTransactions subscribers, nor transactions to newBlocks ones", () => {
    const { hub, session, received } = setup();
    const pending = session.subscribe({ topic: "pendingTransactions" }).id;
    const blocks = session.subscribe({ topic: "newBlocks" }).id;
    hub.publishPending([tx(1)]);
    hub.publishBlock(block(1, [tx(1)]));
    assert.deepEqual(
      received.map((n) => n.params.subscription),
      [pending, blocks],
    );
  });
});

describe("transaction", () => {
  it("follows an unknown hash: PENDING once when admitted, then the committed transaction, then ends", () => {
    const { source, hub, session, received } = setup();
    const t = tx(7);
    const { id, initial } = session.subscribe({
      topic: "transaction",
      hash: t.hash.toUpperCase().replace("0X", "0x"),
    });
    assert.deepEqual(initial, [], "nothing known yet");

    source.pending.set(t.hash, t);
    hub.publishPending([t]);
    hub.publishPending([t]); // a repeat (e.g. re-announced) is not a new status
    assert.equal(received.length, 1);
    assert.deepEqual(received[0]?.params, {
      subscription: id,
      result: {
        status: "PENDING",
        hash: t.hash,
        address: t.address,
        signature: t.signature,
        timestamp: t.timestamp,
        nonce: t.nonce,
        operation: t.operation,
      },
    });

    const b = block(3, [tx(6), t]);
    source.commit(b, [tx(6), t]);
    hub.publishBlock(b);
    assert.equal(received.length, 2);
    assert.deepEqual(received[1]?.params, {
      subscription: id,
      result: {
        hash: t.hash,
        address: t.address,
        signature: t.signature,
        timestamp: t.timestamp,
        nonce: t.nonce,
        operation: t.operation,
        block_hash: b.hash,
        block_number: 3,
        index: 1,
        result: { code: 0 },
      },
    });
    assert.equal(session.size, 0, "the subscription ended by itself");
    assert.equal(session.unsubscribe({ subscription: id }), false, "nothing left to unsubscribe");
    hub.publishBlock(block(4, [t]));
    assert.equal(received.length, 2, "no notification after the end");
  });

  it("answers an already pending transaction with PENDING at once, and not again when admitted", () => {
    const { source, hub, session, received } = setup();
    const t = tx(8);
    source.pending.set(t.hash, t);
    const { id, initial } = session.subscribe({ topic: "transaction", hash: t.hash });
    assert.deepEqual(
      parsed(initial).map((n) => [n.params.subscription, n.params.result.status]),
      [[id, "PENDING"]],
    );
    hub.publishPending([t]);
    assert.equal(received.length, 0, "the initial PENDING was the only one");
    assert.equal(session.size, 1, "still following until committed");
  });

  it("answers an already committed transaction with it at once and ends", () => {
    const { source, session } = setup();
    const t = tx(9);
    source.commit(block(2, [t]), [t]);
    const { id, initial } = session.subscribe({ topic: "transaction", hash: t.hash });
    const [first] = parsed(initial);
    assert.equal(first?.params.subscription, id);
    assert.equal(first?.params.result.block_number, 2);
    assert.equal(session.size, 0, "ended: nothing more will come");
  });

  it("ignores blocks without the transaction", () => {
    const { hub, session, received } = setup();
    session.subscribe({ topic: "transaction", hash: hex(0x77, 32) });
    hub.publishBlock(block(1, [tx(1)]));
    assert.equal(received.length, 0);
    assert.equal(session.size, 1);
  });
});

describe("value", () => {
  const data = `/users/${ALICE}/profile`;

  it("sends the value at the head at once, then each change under the path, and nothing else", () => {
    const { source, hub, session, received } = setup();
    source.leaves.set(`${data}/name`, "ada");
    source.head = 4;
    // Any address case: the path is normalised as writes store it.
    const { id, initial } = session.subscribe({ topic: "value", ref: data.toLowerCase() });
    assert.deepEqual(
      parsed(initial).map((n) => n.params),
      [{ subscription: id, result: { ref: data, block_number: 4, value: { name: "ada" } } }],
    );
    source.head = 5;
    source.leaves.set(`${data}/langs`, ["en"]);
    hub.publishStateChanged([`${data}/langs`, `/account/${ALICE}/nonce`]);
    source.head = 6;
    hub.publishStateChanged([`/users/${BOB}/x`, `${data}x/name`]); // beside it, not under it
    source.head = 7;
    hub.publishStateChanged([`${data}/name`]); // rewritten with the same value: no change
    source.head = 8;
    source.leaves.delete(`${data}/name`);
    source.leaves.delete(`${data}/langs`);
    hub.publishStateChanged([`${data}/name`, `${data}/langs`]);
    assert.deepEqual(
      received.map((n) => n.params.result),
      [
        { ref: data, block_number: 5, value: { name: "ada", langs: ["en"] } },
        { ref: data, block_number: 8, value: null },
      ],
    );
  });

  it("answers a subtree over the leaf limit with an error in the notification, and its value once back under", () => {
    const { source, hub, session, received } = setup();
    const { initial } = session.subscribe({ topic: "value", ref: data });
    assert.equal(parsed(initial)[0]?.params.result.value, null);
    for (const key of ["a", "b", "c", "d"]) source.leaves.set(`${data}/${key}`, 1);
    hub.publishStateChanged([`${data}/d`]);
    source.leaves.delete(`${data}/d`);
    hub.publishStateChanged([`${data}/d`]);
    const [tooLarge, back] = received.map((n) => n.params.result);
    assert.deepEqual(tooLarge?.error, {
      code: -32005,
      message: `${data} holds more than ${VALUE_LEAF_LIMIT} leaves; read a narrower path`,
      data: { reason: "response_too_large", limit: VALUE_LEAF_LIMIT },
    });
    assert.deepEqual(back?.value, { a: 1, b: 1, c: 1 });
  });

  it("stops after unsubscribe", () => {
    const { source, hub, session, received } = setup();
    const { id } = session.subscribe({ topic: "value", ref: data });
    assert.equal(session.unsubscribe({ subscription: id }), true);
    source.leaves.set(`${data}/name`, "ada");
    hub.publishStateChanged([`${data}/name`]);
    assert.deepEqual(received, []);
  });
});

describe("subscription methods over HTTP", () => {
  for (const route of websocketOnlyRoutes()) {
    it(`${route.name} answers -32601 websocket_only whatever the params`, () => {
      assert.ok(route.check.Check({ topic: "newBlocks" }), "any params object passes to the handler");
      assertRpcError(
        () => route.definition.handler({ topic: "newBlocks" }),
        RPC_ERROR_CODES.methodNotFound,
        WEBSOCKET_ONLY_REASON,
        route.name,
      );
    });
  }
});
