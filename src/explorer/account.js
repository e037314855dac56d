/** An account: balance, stake, nonce and whether it validates. */
import { amount, fields, h, notFound } from "./dom.js";
import { rpcBatch } from "./rpc.js";

export async function accountView(ctx, _live, address) {
  const [balance, stake, nonce, validator] = await rpcBatch([
    ["chain_getBalance", { address }],
    ["chain_getConsensusStakeAmount", { address }],
    ["chain_getNonce", { address }],
    ["chain_isValidator", { address }],
  ]);
  const title = h("h1", {}, "Account ", h("span", { class: "mono" }, address));
  if (balance === 0 && stake === 0 && nonce === 0 && !validator) {
    ctx.render(title, notFound("Account (no balance, stake or transactions)"));
    return;
  }
  ctx.render(
    title,
    fields([
      ["Balance", h("span", { id: "account-balance", "data-value": balance }, amount(balance))],
      ["Stake", h("span", { id: "account-stake", "data-value": stake }, amount(stake))],
      ["Nonce", h("span", { id: "account-nonce" }, String(nonce))],
      ["Validator", h("span", { id: "account-validator" }, validator ? "yes" : "no")],
    ]),
  );
}
