import { existsSync, readFileSync } from "node:fs";
import { type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { parse as parseToml } from "smol-toml";
import { homePaths } from "./home.ts";
import type { NodeOptions } from "./options.ts";
import {
  CONFIG_SECTIONS,
  type ConfigSection,
  envName,
  SETTINGS,
  type Setting,
  settingId,
} from "./settings.ts";

/**
 * Where a node's options come from, strongest first: command-line flags, environment variables
 * (`CHAIN_NODE_<SECTION>_<KEY>`), the home's config.toml, the defaults. Each layer is a partial
 * config in the file's shape, checked against the same schema; docs/configuration.md lists the keys.
 */

/** config.toml's shape: sections of keys, every one optional. */
export type NodeConfig = Partial<Record<ConfigSection, Record<string, unknown>>>;

export type ConfigSource = "default" | "file" | "env" | "flag";

/** A source of settings: the file, the environment or the flags. */
export interface ConfigLayer {
  source: Exclude<ConfigSource, "default">;
  values: NodeConfig;
  /** Where exactly a value of this layer was set: the file path, the variable, the flag. */
  origin(setting: Setting): string;
}

export interface ValueSource {
  source: ConfigSource;
  /** The file path, variable or flag; absent for defaults. */
  from?: string;
}

export interface ResolvedConfig {
  options: NodeOptions;
  /** By `section.key`, for every setting. */
  sources: Record<string, ValueSource>;
}

const ConfigSchema = Type.Object(
  Object.fromEntries(
    CONFIG_SECTIONS.map((section) => [
      section,
      Type.Optional(
        Type.Object(
          Object.fromEntries(
            SETTINGS.filter((s) => s.section === section).map((s) => [s.key, Type.Optional(s.schema)]),
          ),
          { additionalProperties: false },
        ),
      ),
    ]),
  ) as Record<string, TSchema>,
  { additionalProperties: false },
);
const configCheck = TypeCompiler.Compile(ConfigSchema);

/** Checks a layer against the schema; the error names the layer's origin of the faulty key. */
function checkLayer(raw: unknown, where: string, originOf: (path: string) => string): NodeConfig {
  if (!configCheck.Check(raw)) {
    const first = configCheck.Errors(raw).First();
    const key = (first?.path ?? "").slice(1).replaceAll("/", ".");
    const origin = key === "" ? where : originOf(key);
    throw new Error(`${origin}: ${key || "(top level)"}: ${first?.message ?? "invalid"}`);
  }
  return raw as NodeConfig;
}

const settingAt = (id: string): Setting | undefined =>
  SETTINGS.find((s) => id === settingId(s) || id.startsWith(`${settingId(s)}.`));

/** Reads `config.toml` of a home (absent file: empty config); errors name the section and key. */
export function loadConfig(home: string): NodeConfig {
  const path = homePaths(home).config;
  if (!existsSync(path)) return {};
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  return checkLayer(raw, path, () => path);
}

export function fileLayer(home: string): ConfigLayer {
  const path = homePaths(home).config;
  return { source: "file", values: loadConfig(home), origin: () => path };
}

/** One variable's text as the setting's type; undefined when it cannot be one. */
function parseEnvValue(schema: TSchema, text: string): unknown {
  // A union of numbers (e.g. 0 or at least 2) reads as a number too, and a union with a boolean
  // (true, false or "auto") as a boolean when the text is one.
  const members = schema.anyOf as TSchema[] | undefined;
  const numericUnion = members?.every((member) => member.type === "integer" || member.type === "number");
  const booleanUnion = members?.some((member) => member.type === "boolean");
  switch (numericUnion === true ? "number" : booleanUnion === true ? "boolean" : schema.type) {
    case "integer":
    case "number":
      return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text;
    case "boolean": {
      const lower = text.trim().toLowerCase();
      if (lower === "true" || lower === "1") return true;
      if (lower === "false" || lower === "0") return false;
      return text;
    }
    case "array":
      return text
        .split(",")
        .map((item) => item.trim())
        .filter((item) => item !== "");
    default:
      return text; // strings and string unions: the schema check judges them
  }
}

/**
 * `CHAIN_NODE_<SECTION>_<KEY>` variables. Other CHAIN_NODE_* variables are left alone: they may
 * belong to something else (a keystore password, a test harness).
 */
export function envLayer(env: Readonly<Record<string, string | undefined>>): ConfigLayer {
  const values: NodeConfig = {};
  for (const setting of SETTINGS) {
    const text = env[envName(setting)];
    if (text === undefined) continue;
    const section = values[setting.section] ?? {};
    section[setting.key] = parseEnvValue(setting.schema, text);
    values[setting.section] = section;
  }
  const originOf = (id: string) => {
    const setting = settingAt(id);
    return setting === undefined ? "environment" : envName(setting);
  };
  checkLayer(values, "environment", originOf);
  return { source: "env", values, origin: envName };
}

/** Flags as a layer; `flagOf` names the flag that set a setting. */
export function flagLayer(values: NodeConfig, flagOf: (setting: Setting) => string): ConfigLayer {
  const originOf = (id: string) => {
    const setting = settingAt(id);
    return setting === undefined ? "flags" : flagOf(setting);
  };
  checkLayer(values, "flags", originOf);
  return { source: "flag", values, origin: flagOf };
}

/** Applies layers (weakest first) on top of `defaults`, noting where each value came from. */
export function resolveConfig(defaults: NodeOptions, layers: readonly ConfigLayer[]): ResolvedConfig {
  const options = structuredClone(defaults);
  const sources: Record<string, ValueSource> = {};
  for (const setting of SETTINGS) {
    sources[settingId(setting)] = { source: "default" };
    for (const layer of layers) {
      const value = layer.values[setting.section]?.[setting.key];
      if (value === undefined) continue;
      setting.set(options, value);
      sources[settingId(setting)] = { source: layer.source, from: layer.origin(setting) };
    }
  }
  return { options, sources };
}

/** Applies a config file on top of the defaults (flags are applied after, by the CLI). */
export function applyConfig(options: NodeOptions, config: NodeConfig): NodeOptions {
  return resolveConfig(options, [{ source: "file", values: config, origin: () => "config.toml" }]).options;
}
