import { randomBytes } from "node:crypto";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import {
  type ConfirmedTx,
  type JsonValue,
  normalizeReadPath,
  type StoredBlock,
  TooManyLeavesError,
  type Tx,
} from "../chain/index.ts";
import { canonicalJson } from "../crypto/index.ts";
import { invalidParams, limitExceeded } from "./errors.ts";
import { blockToJson, confirmedTxToJson, pendingEntryToJson, pendingTxToJson } from "./format.ts";
import { Hash, Params } from "./schemas.ts";

/**
 * Subscriptions of WebSocket clients (docs/websocket.md), without sockets: which topics exist,
 * how a subscription is named, how many one connection may hold, and what each notification
 * carries. ws.ts owns the sockets and hands each connection a `SubscriptionSession`; node/ feeds
 * the hub committed blocks and admitted transactions.
 */

export const SUBSCRIBE_METHOD = "chain_subscribe";
export const UNSUBSCRIBE_METHOD = "chain_unsubscribe";
/** The `method` of every notification a subscription sends. */
export const NOTIFICATION_METHOD = "chain_subscription";

const SUBSCRIPTION_TOPICS = ["newBlocks", "pendingTransactions", "transaction", "value"] as const;
export type SubscriptionTopic = (typeof SUBSCRIPTION_TOPICS)[number];

const SubscribeParams = Params({
  topic: Type.Union(
    SUBSCRIPTION_TOPICS.map((topic) => Type.Literal(topic)),
    { description: "newBlocks, pendingTransactions, transaction or value" },
  ),
  // Required for topic "transaction", refused for the others (checked in subscribe()).
  hash: Type.Optional(Hash),
  // Required for topic "value", refused for the others.
  ref: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "path into the data tree" })),
});
const UnsubscribeParams = Params({
  subscription: Type.String({ maxLength: 128, description: "an id chain_subscribe returned" }),
});
export type SubscribeParams = Static<typeof SubscribeParams>;
export type UnsubscribeParams = Static<typeof UnsubscribeParams>;

const subscribeCheck = TypeCompiler.Compile(SubscribeParams);
const unsubscribeCheck = TypeCompiler.Compile(UnsubscribeParams);

/** What the hub reads to say where a followed transaction is, and what a followed path holds. */
export interface SubscriptionSource {
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
  getPending(hash: string): Tx | undefined;
  /** The value at a normalised path at the head (chain_getValue); throws TooManyLeavesError. */
  headValue(path: string): JsonValue;
  headNumber(): number;
}

export interface SubscriptionLimits {
  /** Subscriptions one connection may hold at once; one more is -32005 too_many_subscriptions. */
  maxSubscriptions: number;
}

/** A subscription id: 16 random bytes as 0x hex, unguessable across connections. */
const randomSubscriptionId = (): string => `0x${randomBytes(16).toString("hex")}`;

/** Receives one notification as JSON text; the caller decides what a slow receiver costs. */
export type NotificationSink = (text: string) => void;

/** The JSON-RPC notification text; `resultJson` is already serialized (once per event, not per client). */
function notificationText(subscription: string, resultJson: string): string {
  return `{"jsonrpc":"2.0","method":"${NOTIFICATION_METHOD}","params":{"subscription":${JSON.stringify(subscription)},"result":${resultJson}}}`;
}

/** The params as their schema types them, or -32602 worded as the HTTP methods word it (server.ts). */
function checked<T extends TSchema>(check: TypeCheck<T>, params: unknown): Static<T> {
  const args = params === undefined ? {} : params;
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw invalidParams("params must be an object of named members");
  }
  if (!check.Check(args)) {
    const first = check.Errors(args).First();
    const where = first?.path ? `params${first.path.replaceAll("/", ".")}` : "params";
    throw invalidParams(`${where}: ${first?.message ?? "invalid"}`, { path: first?.path ?? "" });
  }
  return args;
}

/** A followed path: the canonical JSON of the value last sent, so only a real change notifies. */
interface ValueWatch {
  ref: string;
  last: string;
}

/** A followed transaction: PENDING is sent at most once, the committed form ends the subscription. */
interface TransactionWatch {
  hash: string;
  pendingSent: boolean;
}

/** A followed transaction's state as notification JSON: committed, pending, or unknown (undefined). */
export type TransactionStatus =
  | { committed: true; json: string }
  | { committed: false; json: string | undefined };

/** What chain_subscribe answers: the id, and notifications due right away (sent after the reply). */
export interface SubscribeOutcome {
  id: string;
  initial: string[];
}

/** One connection's subscriptions. Not shared: every connection gets its own from the hub. */
export class SubscriptionSession {
  private readonly hub: SubscriptionHub;
  private readonly send: NotificationSink;
  private readonly newBlocks = new Set<string>();
  private readonly pendingTransactions = new Set<string>();
  private readonly transactions = new Map<string, TransactionWatch>();
  private readonly values = new Map<string, ValueWatch>();
  private closed = false;

  constructor(hub: SubscriptionHub, send: NotificationSink) {
    this.hub = hub;
    this.send = send;
  }

  get size(): number {
    return this.newBlocks.size + this.pendingTransactions.size + this.transactions.size + this.values.size;
  }

  /**
   * chain_subscribe. Throws -32602 for bad params (hash missing for, or given to, the wrong topic;
   * likewise ref and topic value) and -32005 too_many_subscriptions at the limit. A followed
   * transaction that is already pending or committed gets that notification in `initial`; a
   * committed one ends it at once. A followed path gets its value at the head in `initial`.
   */
  subscribe(params: unknown): SubscribeOutcome {
    const { topic, hash, ref } = checked(subscribeCheck, params);
    for (const [member, present, owner] of [
      ["hash", hash !== undefined, "transaction"],
      ["ref", ref !== undefined, "value"],
    ] as const) {
      if (topic === owner && !present) {
        throw invalidParams(`params.${member}: required for topic ${owner}`, { path: `/${member}` });
      }
      if (topic !== owner && present) {
        throw invalidParams(`params.${member}: only for topic ${owner}, not ${topic}`, {
          path: `/${member}`,
        });
      }
    }
    const path = ref === undefined ? undefined : normalizeReadPath(ref);
    if (ref !== undefined && path === undefined) {
      throw invalidParams(`params.ref: ${JSON.stringify(ref)} is not a valid path`, { path: "/ref" });
    }
    const limit = this.hub.limits.maxSubscriptions;
    if (this.size >= limit) {
      throw limitExceeded(`at most ${limit} subscriptions per connection`, "too_many_subscriptions", {
        limit,
      });
    }
    const id = this.hub.newId();
    if (topic === "newBlocks") this.newBlocks.add(id);
    else if (topic === "pendingTransactions") this.pendingTransactions.add(id);
    else if (topic === "value") {
      const watch: ValueWatch = { ref: path as string, last: "" };
      const initial = this.hub.valueJson(watch.ref);
      watch.last = initial.value;
      this.values.set(id, watch);
      return { id, initial: [notificationText(id, initial.json)] };
    } else {
      const watch: TransactionWatch = { hash: (hash as string).toLowerCase(), pendingSent: false };
      const initial = this.hub.currentStatus(watch.hash);
      if (initial.committed) return { id, initial: [notificationText(id, initial.json)] };
      this.transactions.set(id, watch);
      if (initial.json !== undefined) {
        watch.pendingSent = true;
        return { id, initial: [notificationText(id, initial.json)] };
      }
    }
    return { id, initial: [] };
  }

  /** chain_unsubscribe: true if the subscription was this connection's and still running. */
  unsubscribe(params: unknown): boolean {
    const { subscription } = checked(unsubscribeCheck, params);
    return (
      this.newBlocks.delete(subscription) ||
      this.pendingTransactions.delete(subscription) ||
      this.transactions.delete(subscription) ||
      this.values.delete(subscription)
    );
  }

  /** Ends every subscription and detaches from the hub (the connection is gone). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.newBlocks.clear();
    this.pendingTransactions.clear();
    this.transactions.clear();
    this.values.clear();
    this.hub.detach(this);
  }

  /** Called by the hub; `blockJson` and `committedJson` format lazily and at most once per event. */
  onBlock(
    blockJson: () => string,
    txHashes: ReadonlySet<string>,
    committedJson: (hash: string) => string | undefined,
  ): void {
    for (const id of this.newBlocks) this.send(notificationText(id, blockJson()));
    for (const [id, watch] of this.transactions) {
      if (!txHashes.has(watch.hash)) continue;
      const json = committedJson(watch.hash);
      if (json === undefined) continue;
      // The last notification of this subscription: it ends by itself once committed.
      this.transactions.delete(id);
      this.send(notificationText(id, json));
    }
  }

  /**
   * Called by the hub after a block wrote `paths`: each followed path with a written leaf at or
   * below it is read again, and notified if its value differs from the last one sent.
   */
  onStateChanged(paths: readonly string[], value: (ref: string) => { value: string; json: string }): void {
    for (const [id, watch] of this.values) {
      const below = `${watch.ref}/`;
      if (!paths.some((path) => path === watch.ref || path.startsWith(below))) continue;
      const now = value(watch.ref);
      if (now.value === watch.last) continue;
      watch.last = now.value;
      this.send(notificationText(id, now.json));
    }
  }

  /** Called by the hub with the newly admitted transactions. */
  onPending(entries: readonly PendingEvent[]): void {
    for (const entry of entries) {
      for (const id of this.pendingTransactions) this.send(notificationText(id, entry.entryJson()));
    }
    if (this.transactions.size === 0) return;
    for (const entry of entries) {
      for (const [id, watch] of this.transactions) {
        if (watch.hash !== entry.hash || watch.pendingSent) continue;
        watch.pendingSent = true;
        this.send(notificationText(id, entry.fullJson()));
      }
    }
  }
}

/** One admitted transaction, formatted lazily: as the pending list has it, and with its operation. */
export interface PendingEvent {
  hash: string;
  entryJson: () => string;
  fullJson: () => string;
}

/** Memoizes a formatter so an event is serialized once however many connections want it. */
function once(make: () => string): () => string {
  let text: string | undefined;
  return () => {
    text ??= make();
    return text;
  };
}

/**
 * Every connection's session, and the fan-out of chain events to them. Events are delivered
 * synchronously, in the order the chain emits them, so a client sees PENDING before the commit.
 */
export class SubscriptionHub {
  readonly limits: SubscriptionLimits;
  readonly newId: () => string;
  private readonly source: SubscriptionSource;
  private readonly sessions = new Set<SubscriptionSession>();

  constructor(
    source: SubscriptionSource,
    limits: SubscriptionLimits,
    newId: () => string = randomSubscriptionId,
  ) {
    this.source = source;
    this.limits = limits;
    this.newId = newId;
  }

  /** A session for a new connection; `send` gets its notifications. */
  open(send: NotificationSink): SubscriptionSession {
    const session = new SubscriptionSession(this, send);
    this.sessions.add(session);
    return session;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** @internal A closed session leaves the fan-out. */
  detach(session: SubscriptionSession): void {
    this.sessions.delete(session);
  }

  /** Where a followed transaction is now: committed (final), pending, or unknown (json undefined). */
  currentStatus(hash: string): TransactionStatus {
    const confirmed = this.source.getConfirmedTx(hash);
    if (confirmed !== undefined)
      return { committed: true, json: JSON.stringify(confirmedTxToJson(confirmed)) };
    const pending = this.source.getPending(hash);
    return {
      committed: false,
      json: pending === undefined ? undefined : JSON.stringify(pendingTxToJson(pending)),
    };
  }

  /**
   * The value at `ref` at the head: its canonical JSON (what changes are compared by) and the
   * notification result (`{ref, block_number, value}`, or `error` for a subtree over the limit).
   */
  valueJson(ref: string): { value: string; json: string } {
    const blockNumber = this.source.headNumber();
    try {
      const value = this.source.headValue(ref);
      return { value: canonicalJson(value), json: JSON.stringify({ ref, block_number: blockNumber, value }) };
    } catch (error) {
      if (!(error instanceof TooManyLeavesError)) throw error;
      const data = { reason: "response_too_large", limit: error.limit };
      const refusal = { code: -32005, message: error.message, data };
      // Compared as a value of its own: the next block that brings it under the limit notifies.
      return { value: "", json: JSON.stringify({ ref, block_number: blockNumber, error: refusal }) };
    }
  }

  /** A block wrote these leaf paths: followed paths under them are read and notified if changed. */
  publishStateChanged(paths: readonly string[]): void {
    if (this.sessions.size === 0 || paths.length === 0) return;
    const read = new Map<string, { value: string; json: string }>();
    const value = (ref: string) => {
      let found = read.get(ref);
      if (found === undefined) {
        found = this.valueJson(ref);
        read.set(ref, found);
      }
      return found;
    };
    for (const session of this.sessions) session.onStateChanged(paths, value);
  }

  /** A block was committed as head: newBlocks subscribers get it, followed transactions in it end. */
  publishBlock(block: StoredBlock): void {
    if (this.sessions.size === 0) return;
    const blockJson = once(() =>
      JSON.stringify(
        blockToJson(block, false, () => {
          throw new Error("transaction hashes only: no transaction is loaded");
        }),
      ),
    );
    const txHashes = new Set(block.tx_hashes);
    const committed = new Map<string, string | undefined>();
    const committedJson = (hash: string): string | undefined => {
      if (!committed.has(hash)) {
        const confirmed = this.source.getConfirmedTx(hash);
        committed.set(
          hash,
          confirmed === undefined ? undefined : JSON.stringify(confirmedTxToJson(confirmed)),
        );
      }
      return committed.get(hash);
    };
    for (const session of this.sessions) session.onBlock(blockJson, txHashes, committedJson);
  }

  /**
   * Transactions were admitted (journaled) from RPC or gossip. One that a block already took in
   * the meantime is not announced as pending: it no longer is.
   */
  publishPending(txs: readonly Tx[]): void {
    if (this.sessions.size === 0 || txs.length === 0) return;
    const entries: PendingEvent[] = txs
      .filter((tx) => this.source.getConfirmedTx(tx.hash) === undefined)
      .map((tx) => ({
        hash: tx.hash.toLowerCase(),
        entryJson: once(() => JSON.stringify(pendingEntryToJson(tx))),
        fullJson: once(() => JSON.stringify(pendingTxToJson(tx))),
      }));
    if (entries.length === 0) return;
    for (const session of this.sessions) session.onPending(entries);
  }
}
