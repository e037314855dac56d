import { type Client, connect } from "../../src/client/index.ts";
import { startTestNode, type TestNode, type TestNodeOverrides } from "../helpers/testNode.ts";

/** Shared set-up of the client tests: a real in-process dev node and a client connected to it. */

export interface ClientNode {
  t: TestNode;
  client: Client;
}

/** Starts a dev node (see startTestNode) and connects a client; register `t.stop` right after. */
export async function startClientNode(overrides: TestNodeOverrides = {}): Promise<ClientNode> {
  const t = await startTestNode(overrides);
  return { t, client: connect(t.url) };
}

/** Exact type equality (not mere assignability), for compile-time checks of the client's types. */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/** Fails to compile unless `T` is `true`: `expectType<Equal<typeof x, Block<Transaction>>>()`. */
export function expectType<T extends true>(..._proof: T extends true ? [] : [never]): void {}

/** Bound on waiting for a commit on a 50 ms dev chain. */
export const WAIT = { timeoutMs: 5_000, pollMs: 20 } as const;

/** A fetch that counts the JSON-RPC methods it carries (batches included), for checking what a client asks. */
export function countingFetch(): { fetch: typeof fetch; count: (method: string) => number } {
  const counts = new Map<string, number>();
  const counted: typeof fetch = (input, init) => {
    const body: unknown = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    for (const call of Array.isArray(body) ? body : [body]) {
      const method = (call as { method?: unknown } | undefined)?.method;
      if (typeof method === "string") counts.set(method, (counts.get(method) ?? 0) + 1);
    }
    return fetch(input, init);
  };
  return { fetch: counted, count: (method) => counts.get(method) ?? 0 };
}
