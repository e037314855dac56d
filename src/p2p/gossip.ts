import { createHash } from "node:crypto";
import { type GossipsubOpts, type Message, StrictNoSign, TopicValidatorResult } from "@libp2p/gossipsub";
import type { Verdict } from "./types.ts";

/** Room for the gossipsub RPC envelope (topic, ids, control messages) around one payload. */
const GOSSIP_FRAME_OVERHEAD_BYTES = 64 * 1024;

/**
 * Content-addressed message id: sha256(topic ‖ 0x00 ‖ data). Messages are unsigned (payloads
 * carry their own signatures), so there is no (from, seqno) to name them by; the same bytes
 * published twice, by anyone, are one message and are deduplicated network-wide. The topic is
 * hashed in so that equal bytes on two topics stay two messages. sha256 from node:crypto (native)
 * because a 10 MiB proposal is hashed at every hop.
 */
function gossipMessageId(msg: Message): Uint8Array {
  return createHash("sha256")
    .update(msg.topic)
    .update(new Uint8Array([0]))
    .update(msg.data)
    .digest();
}

export function verdictToResult(verdict: Verdict): TopicValidatorResult {
  switch (verdict) {
    case "accept":
      return TopicValidatorResult.Accept;
    case "reject":
      return TopicValidatorResult.Reject;
    default:
      return TopicValidatorResult.Ignore;
  }
}

/**
 * The gossipsub configuration. Choices (checked on 127.0.0.1 with 2-4 nodes):
 * - StrictNoSign + `gossipMessageId`: see above; unsigned messages carry no from/seqno/key.
 * - `allowPublishToZeroTopicPeers` and `ignoreDuplicatePublishError`: publishing with no peers, or
 *   re-publishing a transaction we already gossiped, is normal for a node and not an error.
 * - `floodPublish` (default, kept): our own messages go to every topic peer, not only the mesh, so
 *   a message published right after connecting does not wait for the mesh to form.
 * - D/Dlo/Dhi left at 6/4/12: in a network smaller than D every topic peer is in the mesh, and the
 *   mesh grows on connect plus each heartbeat.
 * - `heartbeatInterval` 500 ms (default 1 s): a new peer is grafted within half a second, which
 *   matters for small validator sets where every link counts; the per-heartbeat work is tiny at
 *   our peer counts. `mcacheLength` 10 keeps the gossip history at 5 s, as with the defaults.
 * - `maxInboundDataLength` = max payload + envelope room: a gossipsub RPC frame above it is not
 *   even decoded (gossipsub then drops its stream from that peer); payloads between the limit and
 *   the frame bound reach our validator, which rejects them and penalizes the sender.
 * - `allowedTopics`: only our three topics are tracked, so a peer cannot grow our topic maps.
 * - `IPColocationFactorWhitelist` for loopback: gossipsub scores down more than 10 peers on one IP,
 *   which is every node of a local testnet.
 * - `fallbackToFloodsub` off: every peer is a chain-node speaking gossipsub.
 */
export function gossipOptions(topics: readonly string[], maxMessageBytes: number): Partial<GossipsubOpts> {
  return {
    globalSignaturePolicy: StrictNoSign,
    msgIdFn: gossipMessageId,
    allowPublishToZeroTopicPeers: true,
    ignoreDuplicatePublishError: true,
    emitSelf: false,
    floodPublish: true,
    fallbackToFloodsub: false,
    heartbeatInterval: 500,
    mcacheLength: 10,
    mcacheGossip: 3,
    maxInboundDataLength: maxMessageBytes + GOSSIP_FRAME_OVERHEAD_BYTES,
    allowedTopics: [...topics],
    scoreParams: { IPColocationFactorWhitelist: new Set(["127.0.0.1", "::1"]) },
  };
}
