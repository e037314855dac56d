/** JSON-RPC 2.0 over HTTP (POST /): single calls and batches, errors as RpcError. */

let nextId = 1;

export class RpcError extends Error {
  constructor(error) {
    super(`${error.message} (${error.code}${error.data?.reason ? `, ${error.data.reason}` : ""})`);
    this.code = error.code;
    this.data = error.data;
  }
}

async function post(body) {
  const response = await fetch("/", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status === 204) return undefined;
  return response.json();
}

/** A request object with a page-wide unique id (the WebSocket feed uses the same counter). */
export const request = (method, params) => {
  const call = { jsonrpc: "2.0", id: nextId++, method };
  if (params !== undefined) call.params = params;
  return call;
};

export async function rpc(method, params) {
  const reply = await post(request(method, params));
  if (reply.error !== undefined) throw new RpcError(reply.error);
  return reply.result;
}

/** Several calls in one POST; results in call order. */
export async function rpcBatch(calls) {
  const requests = calls.map(([method, params]) => request(method, params));
  const replies = await post(requests);
  const byId = new Map(replies.map((reply) => [reply.id, reply]));
  return requests.map((req) => {
    const reply = byId.get(req.id);
    if (reply === undefined) throw new Error(`no reply to ${req.method}`);
    if (reply.error !== undefined) throw new RpcError(reply.error);
    return reply.result;
  });
}
