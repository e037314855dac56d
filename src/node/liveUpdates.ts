import type { Listeners, StateChangeEvent, StoredBlock, Tx } from "../chain/index.ts";
import {
  type RpcServer,
  type RpcServerOptions,
  type SubscriptionSource,
  SubscriptionHub,
  WebSocketEndpoint,
} from "../rpc/index.ts";
import type { Logger } from "./logger.ts";

/** What must be undone at stop: the listeners on chain and pool, and the open WebSockets. */
export interface LiveUpdates {
  close(): Promise<void>;
}

/**
 * Live updates on the RPC port: the WebSocket endpoint at /ws, fed by committed blocks and
 * admitted transactions (from RPC and from gossip alike). Call before
 * `rpc.listen()`, so no client can connect before the feeds are in place.
 */
export function attachLiveUpdates(parts: {
  rpc: RpcServer;
  options: RpcServerOptions;
  committed: Listeners<StoredBlock>;
  stateChanged: Listeners<StateChangeEvent>;
  admitted: Listeners<readonly Tx[]>;
  source: SubscriptionSource;
  log: Logger;
}): LiveUpdates {
  const { rpc, options, log } = parts;
  const hub = new SubscriptionHub(parts.source, { maxSubscriptions: options.wsMaxSubscriptions });
  const endpoint = new WebSocketEndpoint(
    rpc,
    hub,
    {
      maxConnections: options.wsMaxConnections,
      maxMessageBytes: options.maxBodyBytes,
      maxBufferedBytes: options.wsMaxBufferedBytes,
      maxBatchItems: options.maxBatchItems,
      maxInFlightMessages: options.wsMaxInFlight,
      allowAnyOrigin: options.cors,
    },
    log.child({ module: "ws" }),
  );
  rpc.handleUpgrade("/ws", endpoint.upgrade);
  // The chain's listeners swallow what a listener throws (watching must not break committing);
  // a fault in the fan-out is still worth a log line.
  const guarded =
    <T>(what: string, publish: (event: T) => void) =>
    (event: T) => {
      try {
        publish(event);
      } catch (error) {
        log.error({ err: error }, `publishing ${what} to subscribers failed`);
      }
    };
  const unwatch = [
    parts.committed.add(guarded("a block", (block: StoredBlock) => hub.publishBlock(block))),
    parts.stateChanged.add(
      guarded("state changes", (event: StateChangeEvent) => hub.publishStateChanged(event.paths)),
    ),
    parts.admitted.add(guarded("transactions", (txs: readonly Tx[]) => hub.publishPending(txs))),
  ];
  return {
    async close() {
      for (const remove of unwatch) remove();
      await endpoint.close();
    },
  };
}
