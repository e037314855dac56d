import { Command, Option } from "commander";
import type {
  Client,
  ConfirmedTransaction,
  TransactionsByAddressParams,
  TransactionsPage,
} from "../../client/index.ts";
import { isAddress } from "../../crypto/index.ts";
import { parseIntFlag } from "../options.ts";
import { clientOf, describeError, type RpcFlags, rpcOptions } from "./clientOptions.ts";

interface HistoryFlags extends RpcFlags {
  fromBlock?: number;
  toBlock?: number;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

/**
 * `chain-node history <address>`: an account's committed transactions, newest first, one page
 * (chain_getTransactionsByAddress) or, with --all, every page from there to the last.
 */
export function historyCommand(): Command {
  const command = new Command("history")
    .description("an account's committed transactions on a running node, newest first")
    .argument("<address>", "account address (0x + 40 hex)")
    .addOption(
      new Option("--from-block <n>", "lowest block listed").argParser(
        parseIntFlag(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .addOption(
      new Option("--to-block <n>", "highest block listed").argParser(
        parseIntFlag(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .addOption(
      new Option("--limit <n>", "transactions per page (node default 25)").argParser(parseIntFlag(1, 100)),
    )
    .addOption(new Option("--cursor <cursor>", "start at the page a previous answer's next cursor names"))
    .addOption(new Option("--all", "follow the cursor to the last page"));
  for (const option of rpcOptions()) command.addOption(option);
  return command.action(async (address: string, flags: HistoryFlags) => {
    if (!isAddress(address)) throw new Error(`${address} is not an address (0x + 40 hex digits)`);
    const params: TransactionsByAddressParams = { address };
    if (flags.fromBlock !== undefined) params.from_block = flags.fromBlock;
    if (flags.toBlock !== undefined) params.to_block = flags.toBlock;
    if (flags.limit !== undefined) params.limit = flags.limit;
    if (flags.cursor !== undefined) params.cursor = flags.cursor;
    try {
      const client = clientOf(flags);
      const page =
        flags.all === true ? await everyPage(client, params) : await client.getTransactionsByAddress(params);
      if (flags.json) {
        console.log(JSON.stringify(page, null, 2));
        return;
      }
      for (const tx of page.transactions) console.log(describe(tx, address));
      if (page.transactions.length === 0) console.log("no transactions");
      if (page.next_cursor !== null) console.log(`more: --cursor ${page.next_cursor}`);
    } catch (error) {
      throw describeError(error);
    }
  });
}

/** Every page from `params`' cursor (or the newest) to the last, as one page without a cursor. */
async function everyPage(client: Client, params: TransactionsByAddressParams): Promise<TransactionsPage> {
  const transactions: ConfirmedTransaction[] = [];
  let next: TransactionsByAddressParams = params;
  for (;;) {
    const page = await client.getTransactionsByAddress(next);
    transactions.push(...page.transactions);
    if (page.next_cursor === null) return { transactions, next_cursor: null };
    // A cursor that does not move would loop for ever: only a broken node answers so.
    if (page.next_cursor === next.cursor) throw new Error("the node answered the same cursor twice");
    next = { ...params, cursor: page.next_cursor };
  }
}

/** One line: where it is, its hash, whether the account sent or received it, what it wrote, how it went. */
function describe(tx: ConfirmedTransaction, address: string): string {
  const direction = tx.address.toLowerCase() === address.toLowerCase() ? "sent    " : "received";
  const outcome = tx.result.code === 0 ? "succeeded" : `failed (${tx.result.reason})`;
  const { ref, value } = tx.operation;
  return `${tx.block_number}:${tx.index}  ${tx.hash}  ${direction}  ${ref} = ${JSON.stringify(value)}  ${outcome}`;
}
