import { stringify as toToml } from "smol-toml";
import type { NodeConfig, ResolvedConfig, ValueSource } from "./config.ts";
import { CONFIG_SECTIONS, SETTINGS, settingId } from "./settings.ts";

/** The effective configuration in config.toml's shape (every key, defaults included). */
function effectiveConfig(resolved: ResolvedConfig): NodeConfig {
  const config: NodeConfig = {};
  for (const setting of SETTINGS) {
    const section = config[setting.section] ?? {};
    section[setting.key] = setting.get(resolved.options);
    config[setting.section] = section;
  }
  return config;
}

/** "default", "file /home/config.toml", "env CHAIN_NODE_RPC_PORT", "flag --rpc-port". */
const describe = (source: ValueSource | undefined): string =>
  source?.from === undefined ? "default" : `${source.source} ${source.from}`;

/**
 * The effective configuration as TOML that `config.toml` accepts as it is, each value followed by
 * a comment saying where it came from.
 */
export function renderConfigToml(resolved: ResolvedConfig, home: string): string {
  const config = effectiveConfig(resolved);
  const lines = [
    `# Effective configuration of ${home}`,
    "# Precedence: flags > environment (CHAIN_NODE_<SECTION>_<KEY>) > config.toml > defaults.",
  ];
  for (const section of CONFIG_SECTIONS) {
    lines.push("", `[${section}]`);
    const values = config[section] ?? {};
    const rendered = SETTINGS.filter((s) => s.section === section).map((setting) => ({
      // smol-toml quotes and escapes the value; one key at a time keeps our order and comments.
      line: toToml({ [setting.key]: values[setting.key] }).trim(),
      note: describe(resolved.sources[settingId(setting)]),
    }));
    const width = Math.max(...rendered.map((r) => r.line.length));
    for (const { line, note } of rendered) lines.push(`${line.padEnd(width)}  # ${note}`);
  }
  return `${lines.join("\n")}\n`;
}

/** `config show --json`: the effective values and, by `section.key`, where each came from. */
export function configJson(resolved: ResolvedConfig): {
  config: NodeConfig;
  sources: Record<string, ValueSource>;
} {
  return { config: effectiveConfig(resolved), sources: resolved.sources };
}
