import { Command, Option } from "commander";
import type { Client, ConfirmedTransaction, Hash } from "../../client/index.ts";
import { isAddress, isHex } from "../../crypto/index.ts";
import {
  clientOf,
  describeError,
  type KeyFlags,
  keyOptions,
  parseAmount,
  type RpcFlags,
  rpcOptions,
  rpcUrlFromHome,
  signingKey,
} from "./clientOptions.ts";

/** `chain-node tx transfer|stake|unstake|get`: sign, send and follow transactions of a running node. */

interface SendFlags extends RpcFlags, KeyFlags {
  amount: number;
  wait: boolean;
  timeout: number;
}

export function txCommand(): Command {
  return new Command("tx")
    .description("send and look up transactions on a running node (over its JSON-RPC)")
    .addCommand(
      sendCommand("transfer", "move an amount of your balance to another address", [
        new Option("--to <address>", "recipient").makeOptionMandatory().argParser(parseAddress),
      ]).action((flags: SendFlags & { to: string }) =>
        send(flags, (client, key) => client.wallet(key).transfer(flags.to, flags.amount)),
      ),
    )
    .addCommand(
      sendCommand("stake", "move an amount of your balance into consensus stake", []).action(
        (flags: SendFlags) => send(flags, (client, key) => client.wallet(key).stake(flags.amount)),
      ),
    )
    .addCommand(
      sendCommand("unstake", "move an amount of your stake back to your balance", []).action(
        (flags: SendFlags) => send(flags, (client, key) => client.wallet(key).unstake(flags.amount)),
      ),
    )
    .addCommand(getCommand());
}

function sendCommand(name: string, description: string, options: Option[]): Command {
  const command = new Command(name).description(description);
  for (const option of [
    ...options,
    new Option("--amount <n>", "a positive whole amount").makeOptionMandatory().argParser(parseAmount),
    new Option("--no-wait", "print the hash and return without waiting for the commit"),
    new Option("--timeout <ms>", "how long to wait for the commit").default(30_000).argParser(parseAmount),
    ...keyOptions(),
    ...rpcOptions(true),
  ]) {
    command.addOption(option);
  }
  return command.hook("preAction", (self) => rpcUrlFromHome(self));
}

async function send(
  flags: SendFlags,
  submit: (client: Client, key: Uint8Array) => Promise<Hash>,
): Promise<void> {
  const key = await signingKey(flags);
  const client = clientOf(flags);
  try {
    const hash = await submit(client, key);
    if (!flags.wait) {
      print(flags, { hash, status: "PENDING" }, hash);
      return;
    }
    if (!flags.json) console.error(`sent ${hash}, waiting for its block…`);
    const tx = await client.waitForTransaction(hash, { timeoutMs: flags.timeout });
    print(flags, tx, describeCommitted(tx));
    if (tx.result.code !== 0) process.exitCode = 1;
  } catch (error) {
    throw describeError(error);
  }
}

function getCommand(): Command {
  const command = new Command("get")
    .description("a transaction by hash: pending, committed with its result, or not found")
    .argument("<hash>", "transaction hash (0x + 64 hex)");
  for (const option of rpcOptions()) command.addOption(option);
  return command.action(async (hash: string, flags: RpcFlags) => {
    if (!isHex(hash, 32)) throw new Error(`${hash} is not a transaction hash (0x + 64 hex digits)`);
    try {
      const tx = await clientOf(flags).getTransactionByHash({ hash });
      if (tx === null) {
        print(flags, null, `${hash}: not found`);
        process.exitCode = 1;
        return;
      }
      print(flags, tx, "block_number" in tx ? describeCommitted(tx) : `${hash}: pending`);
    } catch (error) {
      throw describeError(error);
    }
  });
}

function describeCommitted(tx: ConfirmedTransaction): string {
  const outcome = tx.result.code === 0 ? "succeeded" : `failed (${tx.result.reason})`;
  return `${tx.hash}: committed in block ${tx.block_number} at index ${tx.index}, ${outcome}`;
}

function print(flags: RpcFlags, value: unknown, line: string): void {
  console.log(flags.json ? JSON.stringify(value, null, 2) : line);
}

function parseAddress(value: string): string {
  if (!isAddress(value)) throw new Error(`${value} is not an address (0x + 40 hex digits)`);
  return value;
}
