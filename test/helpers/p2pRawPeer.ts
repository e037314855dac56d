import { noise } from "@chainsafe/libp2p-noise";
import { yamux } from "@chainsafe/libp2p-yamux";
import { gossipsub, StrictNoSign } from "@libp2p/gossipsub";
import { identify } from "@libp2p/identify";
import type { Libp2p, Stream } from "@libp2p/interface";
import { tcp } from "@libp2p/tcp";
import { multiaddr } from "@multiformats/multiaddr";
import { createLibp2p } from "libp2p";
import { encodeFrame, StreamReader } from "../../src/p2p/framing.ts";
import {
  BLOCKS_BY_RANGE_PROTOCOL,
  GOSSIP_TOPICS,
  type PeerStatus,
  SNAPSHOTS_PROTOCOL,
  STATUS_PROTOCOL,
  topicName,
} from "../../src/p2p/index.ts";

/**
 * A bare libp2p node that speaks our protocols by hand, so tests can send what a chain-node never
 * would: malformed statuses, garbage requests, oversized or wrong answers, silence.
 */
export interface RawPeerOptions {
  /** Raw bytes answered to a status request (one frame is built around them); "silent" never answers. */
  statusAnswer: Uint8Array | "silent";
  /** Raw bytes answered to a blocks request; "silent" never answers; absent = protocol not spoken. */
  blocksAnswer?: Uint8Array | "silent";
  /** Sent as the frame's length instead of the real one (to claim a huge body). */
  blocksAnswerClaimedLength?: number;
  /** Raw bytes answered to a snapshots request (the body: status byte + payload); as blocksAnswer. */
  snapshotAnswer?: Uint8Array | "silent";
  /** Sent as the snapshots answer frame's length instead of the real one. */
  snapshotAnswerClaimedLength?: number;
  /** Joins the gossip topics of this chain (so a chain-node counts it at once, as it would a real peer). */
  topicsOf?: PeerStatus;
}

export interface RawPeer {
  node: Libp2p;
  peerId: string;
  /** Dials `addr`. */
  connect(addr: string): Promise<void>;
  /** Opens `protocol` to `addr`, writes `bytes` as they are, half-closes; resolves with the outcome. */
  send(addr: string, protocol: string, bytes: Uint8Array): Promise<"answered" | "reset">;
  connectionCount(): number;
  stop(): Promise<void>;
}

const utf8 = new TextEncoder();

export function json(value: unknown): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

async function answerWith(
  stream: Stream,
  answer: Uint8Array | "silent",
  claimedLength?: number,
): Promise<void> {
  const reader = new StreamReader(stream, 1 << 20);
  try {
    await reader.readFrame(1 << 20, AbortSignal.timeout(5000));
    if (answer === "silent") return; // hold the stream open; the requester must time out
    const frame = encodeFrame(answer);
    if (claimedLength !== undefined) new DataView(frame.buffer).setUint32(0, claimedLength);
    stream.send(frame);
    await stream.close();
  } catch {
    stream.abort(new Error("raw peer: bad request"));
  } finally {
    reader.dispose();
  }
}

export async function startRawPeer(options: RawPeerOptions): Promise<RawPeer> {
  const node = await createLibp2p({
    addresses: { listen: ["/ip4/127.0.0.1/tcp/0"] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    services: {
      identify: identify(),
      pubsub: gossipsub({ globalSignaturePolicy: StrictNoSign, allowPublishToZeroTopicPeers: true }),
    },
  });
  const { topicsOf } = options;
  if (topicsOf !== undefined) {
    for (const topic of GOSSIP_TOPICS) node.services.pubsub.subscribe(topicName(topic, topicsOf));
  }
  await node.handle(STATUS_PROTOCOL, (stream) => answerWith(stream, options.statusAnswer));
  const { blocksAnswer } = options;
  if (blocksAnswer !== undefined) {
    await node.handle(BLOCKS_BY_RANGE_PROTOCOL, (stream) =>
      answerWith(stream, blocksAnswer, options.blocksAnswerClaimedLength),
    );
  }
  const { snapshotAnswer } = options;
  if (snapshotAnswer !== undefined) {
    await node.handle(SNAPSHOTS_PROTOCOL, (stream) =>
      answerWith(stream, snapshotAnswer, options.snapshotAnswerClaimedLength),
    );
  }
  return {
    node,
    peerId: node.peerId.toString(),
    async connect(addr) {
      await node.dial(multiaddr(addr));
    },
    async send(addr, protocol, bytes) {
      const stream = await node.dialProtocol(multiaddr(addr), protocol);
      const reader = new StreamReader(stream, 1 << 20);
      try {
        stream.send(bytes);
        await stream.close();
        await reader.readFrame(1 << 20, AbortSignal.timeout(5000));
        return "answered";
      } catch {
        return "reset";
      } finally {
        reader.dispose();
      }
    },
    connectionCount: () => node.getConnections().length,
    stop: async () => {
      await node.stop();
    },
  };
}
