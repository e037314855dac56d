import { Command, Option } from "commander";
import { configJson, renderConfigToml } from "../../node/index.ts";
import { type CommonFlags, commonOptions, resolveConfigOf } from "../options.ts";

interface ShowFlags extends CommonFlags {
  json?: boolean;
}

export function configCommand(): Command {
  const show = new Command("show").description(
    "print the configuration `start` would run with (flags > CHAIN_NODE_* environment > config.toml > defaults), each value with its source",
  );
  for (const option of commonOptions(".chain-node/node")) show.addOption(option);
  show.addOption(new Option("--json", "print JSON: {config, sources}")).action((flags: ShowFlags) => {
    const resolved = resolveConfigOf(flags);
    if (flags.json === true) console.log(JSON.stringify(configJson(resolved), null, 2));
    else process.stdout.write(renderConfigToml(resolved, flags.home));
  });
  return new Command("config").description("inspect a node's configuration").addCommand(show);
}
