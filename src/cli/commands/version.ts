import { Command } from "commander";
import { NODE_VERSION } from "../../node/index.ts";

export function versionCommand(): Command {
  return new Command("version").description("print the node version").action(() => {
    console.log(NODE_VERSION);
  });
}
