import { Command } from "commander";
import { NODE_VERSION } from "../node/index.ts";
import { backupCommand } from "./commands/backup.ts";
import { balanceCommand } from "./commands/balance.ts";
import { getCommand } from "./commands/get.ts";
import { genesisCommand } from "./commands/genesis.ts";
import { idCommand } from "./commands/id.ts";
import { configCommand } from "./commands/config.ts";
import { devCommand } from "./commands/dev.ts";
import { exportCommand } from "./commands/export.ts";
import { historyCommand } from "./commands/history.ts";
import { importCommand } from "./commands/import.ts";
import { initCommand } from "./commands/init.ts";
import { keysCommand } from "./commands/keys.ts";
import { snapshotCommand } from "./commands/snapshot.ts";
import { startCommand } from "./commands/start.ts";
import { testnetCommand } from "./commands/testnet.ts";
import { txCommand } from "./commands/tx.ts";
import { versionCommand } from "./commands/version.ts";

const program = new Command("chain-node")
  .description("a blockchain node with a JSON-RPC 2.0 interface")
  .version(NODE_VERSION, "-V, --version")
  .addCommand(devCommand())
  .addCommand(initCommand())
  .addCommand(idCommand())
  .addCommand(genesisCommand())
  .addCommand(testnetCommand())
  .addCommand(startCommand())
  .addCommand(exportCommand())
  .addCommand(importCommand())
  .addCommand(backupCommand())
  .addCommand(configCommand())
  .addCommand(keysCommand())
  .addCommand(snapshotCommand())
  .addCommand(txCommand())
  .addCommand(balanceCommand())
  .addCommand(getCommand())
  .addCommand(historyCommand())
  .addCommand(versionCommand());

try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`chain-node: ${(error as Error).message}`);
  process.exit(1);
}
