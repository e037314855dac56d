import { Type } from "@sinclair/typebox";
import { type MethodDefinition, method } from "../method.ts";
import { Count, NodeInfoSchema } from "../resultSchemas.ts";
import { NoParams } from "../schemas.ts";
import type { RpcContext } from "../types.ts";

/** Handlers of the `net_` namespace: live network status, read from the node on every call. */
export function netMethods({ network }: RpcContext): Record<string, MethodDefinition> {
  return {
    listening: method({
      params: NoParams,
      summary: "Whether the node's peer-to-peer listener is open.",
      result: "Boolean",
      resultSchema: Type.Boolean(),
      handler: () => network.listening(),
    }),
    nodeInfo: method({
      params: NoParams,
      summary: "Node name, location and version.",
      result: "NodeInfo",
      resultSchema: NodeInfoSchema,
      handler: () => network.nodeInfo(),
    }),
    peerCount: method({
      params: NoParams,
      summary: "Number of connected peers.",
      result: "Number",
      resultSchema: Count,
      handler: () => network.peerCount(),
    }),
    syncing: method({
      params: NoParams,
      summary: "Whether the node is catching up with its peers.",
      result: "Boolean",
      resultSchema: Type.Boolean(),
      handler: () => network.syncing(),
    }),
    id: method({
      params: NoParams,
      summary: "Network id: 0 main network, 1 test network.",
      result: "Number",
      resultSchema: Type.Union([Type.Literal(0), Type.Literal(1)]),
      handler: () => network.networkId(),
    }),
    chainId: method({
      params: NoParams,
      summary: "The chain id transactions must be signed for (beyond the spec: needed to sign).",
      result: "Number",
      resultSchema: Type.Integer({ minimum: 0, maximum: 109, description: "v must fit one byte" }),
      handler: () => network.chainId(),
    }),
  };
}
