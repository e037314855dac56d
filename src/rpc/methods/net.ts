import { Type } from "@sinclair/typebox";
import type { Handlers, MethodTable } from "../method.ts";
import { Count, NodeInfoSchema } from "../resultSchemas.ts";
import { NoParams } from "../schemas.ts";
import type { RpcContext } from "../types.ts";

/** The `net_` namespace: live network status, read from the node on every call. */
export const NET_METHODS = {
  net_listening: {
    params: NoParams,
    summary: "Whether the node's peer-to-peer listener is open.",
    result: "Boolean",
    resultSchema: Type.Boolean(),
  },
  net_nodeInfo: {
    params: NoParams,
    summary: "Node name, location and version.",
    result: "NodeInfo",
    resultSchema: NodeInfoSchema,
  },
  net_peerCount: {
    params: NoParams,
    summary: "Number of connected peers.",
    result: "Number",
    resultSchema: Count,
  },
  net_syncing: {
    params: NoParams,
    summary: "Whether the node is catching up with its peers.",
    result: "Boolean",
    resultSchema: Type.Boolean(),
  },
  net_id: {
    params: NoParams,
    summary: "Network id: 0 main network, 1 test network.",
    result: "Number",
    resultSchema: Type.Union([Type.Literal(0), Type.Literal(1)]),
  },
  net_chainId: {
    params: NoParams,
    summary: "The chain id transactions must be signed for (beyond the spec: needed to sign).",
    result: "Number",
    resultSchema: Type.Integer({ minimum: 0, maximum: 109, description: "v must fit one byte" }),
  },
} satisfies MethodTable;

export function netHandlers({ network }: RpcContext): Handlers<typeof NET_METHODS> {
  return {
    net_listening: () => network.listening(),
    net_nodeInfo: () => network.nodeInfo(),
    net_peerCount: () => network.peerCount(),
    net_syncing: () => network.syncing(),
    net_id: () => network.networkId(),
    net_chainId: () => network.chainId(),
  };
}
