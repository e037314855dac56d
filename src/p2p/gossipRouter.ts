import { type GossipSub, type Message, TopicValidatorResult } from "@libp2p/gossipsub";
import type { PeerId } from "@libp2p/interface";
import type { Logger } from "pino";
import { errorMessage, P2pError } from "./errors.ts";
import { decodeJson, encodeJson } from "./framing.ts";
import { verdictToResult } from "./gossip.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerManager } from "./peerManager.ts";
import { topicName } from "./protocols.ts";
import { GOSSIP_TOPICS, type GossipTopic, type P2pHandlers, type PeerStatus } from "./types.ts";

/**
 * Our gossip on gossipsub: the chain's topic names, publishing, and the validator every received
 * message passes (size, a handshaken sender the peer filter allows, JSON, then the node's
 * verdict, a reject costing the sender a penalty). gossip.ts holds the gossipsub settings.
 */
export class GossipRouter {
  private readonly live: LiveNode;
  private readonly peers: PeerManager;
  private readonly onGossip: P2pHandlers["onGossip"];
  private readonly maxMessageBytes: number;
  private readonly log: Logger;
  private readonly topicOf = new Map<string, GossipTopic>();
  private readonly nameOf: Partial<Record<GossipTopic, string>> = {};

  constructor(parts: {
    live: LiveNode;
    peers: PeerManager;
    onGossip: P2pHandlers["onGossip"];
    maxMessageBytes: number;
    log: Logger;
  }) {
    this.live = parts.live;
    this.peers = parts.peers;
    this.onGossip = parts.onGossip;
    this.maxMessageBytes = parts.maxMessageBytes;
    this.log = parts.log;
  }

  /** Names our topics after our chain (see topicName) and returns the names. Once, at start. */
  nameTopics(identity: PeerStatus): ReadonlySet<string> {
    for (const topic of GOSSIP_TOPICS) {
      const name = topicName(topic, identity);
      this.nameOf[topic] = name;
      this.topicOf.set(name, topic);
    }
    return new Set(this.topicOf.keys());
  }

  /** Hooks into gossipsub before it starts: who subscribed to what, and our topics' validators. */
  attach(pubsub: GossipSub): void {
    pubsub.addEventListener("subscription-change", (evt) =>
      this.peers.onSubscriptionChange(evt.detail.peerId, evt.detail.subscriptions),
    );
    for (const [name, topic] of this.topicOf) {
      pubsub.topicValidators.set(name, (peer, message) => this.validate(topic, peer, message));
    }
  }

  /** Joins our topics (once gossipsub runs). */
  subscribe(pubsub: GossipSub): void {
    for (const name of this.topicOf.keys()) pubsub.subscribe(name);
  }

  /** See P2pNetwork.publish. */
  publish(topic: GossipTopic, payload: unknown): void {
    const data = encodeJson(payload);
    if (data.byteLength > this.maxMessageBytes) {
      throw new P2pError(
        "message_too_large",
        `gossip message of ${data.byteLength} bytes exceeds ${this.maxMessageBytes}`,
      );
    }
    const name = this.nameOf[topic];
    const node = this.live();
    if (node === undefined || name === undefined) {
      this.log.debug({ topic }, "publish while not running: dropped");
      return;
    }
    node.services.pubsub.publish(name, data).catch((err: unknown) => {
      this.log.warn({ topic, err: errorMessage(err) }, "gossip publish failed");
    });
  }

  private async validate(topic: GossipTopic, peer: PeerId, message: Message): Promise<TopicValidatorResult> {
    const from = peer.toString();
    try {
      if (message.data.byteLength > this.maxMessageBytes) {
        this.penalizeLater(from, `gossip of ${message.data.byteLength} bytes on ${topic}`);
        return TopicValidatorResult.Reject;
      }
      const entry = this.peers.get(from);
      if (entry?.status === undefined || !this.peers.isAllowed(from)) return TopicValidatorResult.Ignore;
      let payload: unknown;
      try {
        payload = decodeJson(message.data);
      } catch {
        this.penalizeLater(from, `gossip on ${topic} is not JSON`);
        return TopicValidatorResult.Reject;
      }
      let verdict: Awaited<ReturnType<P2pHandlers["onGossip"]>>;
      try {
        verdict = await this.onGossip(topic, payload, from);
      } catch (err) {
        this.log.error({ err, topic }, "onGossip threw");
        return TopicValidatorResult.Ignore;
      }
      if (verdict === "reject") this.penalizeLater(from, `gossip rejected on ${topic}`);
      return verdictToResult(verdict);
    } catch (err) {
      this.log.error({ err, topic }, "gossip validation failed");
      return TopicValidatorResult.Ignore;
    }
  }

  /** Penalizes after gossipsub has finished with the message (hanging up inside its validator races it). */
  private penalizeLater(peerId: string, reason: string): void {
    setImmediate(() => {
      if (this.live() !== undefined) this.peers.penalize(peerId, reason);
    });
  }
}
