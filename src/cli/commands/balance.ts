import { Command } from "commander";
import type { BatchEntry } from "../../client/index.ts";
import { isAddress } from "../../crypto/index.ts";
import { clientOf, describeError, type RpcFlags, rpcOptions } from "./clientOptions.ts";

/** `chain-node balance <address>`: balance, stake, nonce and validator membership, in one batch. */
export function balanceCommand(): Command {
  const command = new Command("balance")
    .description("an account's balance, stake, nonce and validator membership on a running node")
    .argument("<address>", "account address (0x + 40 hex)");
  for (const option of rpcOptions()) command.addOption(option);
  return command.action(async (address: string, flags: RpcFlags) => {
    if (!isAddress(address)) throw new Error(`${address} is not an address (0x + 40 hex digits)`);
    try {
      // One batch: the four answers describe the same moment of the chain.
      const [balance, stake, nonce, validator] = await clientOf(flags).batch([
        { method: "chain_getBalance", params: { address } },
        { method: "chain_getConsensusStakeAmount", params: { address } },
        { method: "chain_getNonce", params: { address } },
        { method: "chain_isValidator", params: { address } },
      ] as const);
      const account = {
        address,
        balance: resultOf(balance),
        stake: resultOf(stake),
        nonce: resultOf(nonce),
        validator: resultOf(validator),
      };
      if (flags.json) console.log(JSON.stringify(account, null, 2));
      else {
        console.log(`address    ${account.address}`);
        console.log(`balance    ${account.balance}`);
        console.log(`stake      ${account.stake}`);
        console.log(`nonce      ${account.nonce}`);
        console.log(`validator  ${account.validator ? "yes" : "no"}`);
      }
    } catch (error) {
      throw describeError(error);
    }
  });
}

function resultOf<R>(entry: BatchEntry<R>): R {
  if (!entry.ok) throw entry.error;
  return entry.result;
}
