import { readFileSync } from "node:fs";
import { Command, Option } from "commander";
import { bytesToHex, hexToBytes, isHex, isValidPrivateKey } from "../../crypto/index.ts";
import {
  assertKeyNameFree,
  createKey,
  type KeyInfo,
  keystoreScryptFor,
  listKeys,
  nextFreeKeyName,
  randomPrivateKey,
  readTestFaults,
  type ScryptParams,
  TEST_FAULT_VARIABLES,
  showKey,
  unlockKey,
} from "../../node/index.ts";
import {
  type PasswordFlags,
  passwordOptions,
  promptHidden,
  readNewPassword,
  readPassword,
} from "../password.ts";

/** `chain-node keys new|list|show|import|export` (docs/keys.md). */

const DEFAULT_HOME = ".chain-node/node";

interface HomeFlags {
  home: string;
}

export function keysCommand(): Command {
  return new Command("keys")
    .description("manage the keys of a home (<home>/keys/<name>.json, encrypted v3 keystores)")
    .addCommand(newCommand())
    .addCommand(listCommand())
    .addCommand(showCommand())
    .addCommand(importCommand())
    .addCommand(exportCommand());
}

/** The scrypt cost for new keystores, with a warning when the test-only override weakens it. */
export function keystoreScrypt(): ScryptParams {
  const testN = readTestFaults(process.env).keystoreScryptN;
  const scrypt = keystoreScryptFor(testN);
  if (testN !== undefined) {
    const variable = TEST_FAULT_VARIABLES.keystoreScryptN;
    console.error(`warning: ${variable}=${scrypt.n}: weak key encryption, for tests only`);
  }
  return scrypt;
}

function subcommand(name: string, description: string, options: Option[]): Command {
  const command = new Command(name)
    .description(description)
    .addOption(new Option("--home <dir>", "node home whose keys/ holds the keys").default(DEFAULT_HOME));
  for (const option of options) command.addOption(option);
  return command;
}

const nameOption = () =>
  new Option("--name <name>", "key name (file keys/<name>.json)").makeOptionMandatory();

function newCommand(): Command {
  return subcommand("new", "create a random key encrypted with a password", [
    new Option("--name <name>", "key name (default: the first free of key1, key2, …)"),
    ...passwordOptions(),
  ]).action(async (flags: HomeFlags & PasswordFlags & { name?: string }) => {
    const name = flags.name ?? nextFreeKeyName(flags.home);
    assertKeyNameFree(flags.home, name);
    const password = await readNewPassword(flags, `key "${name}"`);
    printCreated(await createKey(flags.home, name, randomPrivateKey(), password, keystoreScrypt()));
  });
}

function listCommand(): Command {
  return subcommand("list", "print each key's name and address (no password needed)", [
    new Option("--json", "print a JSON array of {name, address, encrypted}"),
  ]).action((flags: HomeFlags & { json?: boolean }) => {
    const { keys, unreadable } = listKeys(flags.home);
    for (const { name, reason } of unreadable) console.error(`warning: skipped "${name}": ${reason}`);
    if (flags.json) {
      console.log(JSON.stringify(keys));
      return;
    }
    if (keys.length === 0) console.error(`no keys in ${flags.home}`);
    const width = Math.max(0, ...keys.map((key) => key.name.length));
    for (const key of keys) {
      console.log(`${key.name.padEnd(width)}  ${key.address}${key.encrypted ? "" : "  (unencrypted)"}`);
    }
  });
}

function showCommand(): Command {
  return subcommand("show", "print a key's address (no password needed)", [nameOption()]).action(
    (flags: HomeFlags & { name: string }) => {
      console.log(showKey(flags.home, flags.name).address);
    },
  );
}

function importCommand(): Command {
  return subcommand("import", "encrypt an existing private key as a new named key", [
    nameOption(),
    new Option(
      "--private-key-file <file>",
      "file holding the private key as hex (else a prompt; never an argument, which ps and shell history see)",
    ),
    ...passwordOptions(),
  ]).action(async (flags: HomeFlags & PasswordFlags & { name: string; privateKeyFile?: string }) => {
    assertKeyNameFree(flags.home, flags.name);
    const privateKey = await readPrivateKey(flags.privateKeyFile);
    const password = await readNewPassword(flags, `key "${flags.name}"`);
    const key = await createKey(flags.home, flags.name, privateKey, password, keystoreScrypt());
    for (const other of listKeys(flags.home).keys) {
      if (other.name !== key.name && other.address === key.address) {
        console.error(`note: key "${other.name}" holds the same account`);
      }
    }
    printCreated(key);
  });
}

function exportCommand(): Command {
  return subcommand("export", "print a key's private key (after its password)", [
    nameOption(),
    ...passwordOptions(),
  ]).action(async (flags: HomeFlags & PasswordFlags & { name: string }) => {
    const key = await unlockKey(flags.home, flags.name, () => readPassword(flags, `key "${flags.name}"`));
    console.error(
      `WARNING: below is the private key of "${flags.name}" (${key.address}). Whoever sees it controls ` +
        "the account: keep it out of logs, chats, screenshots and shell history.",
    );
    console.log(bytesToHex(key.privateKey));
  });
}

function printCreated(key: KeyInfo): void {
  console.log(`created key "${key.name}"
  address  ${key.address}`);
}

/** A private key as 64 hex digits (0x optional), from a file or a prompt with no echo. */
async function readPrivateKey(file: string | undefined): Promise<Uint8Array> {
  let text: string;
  if (file === undefined) {
    text = await promptHidden(
      "Private key (hex): ",
      "give the private key with --private-key-file FILE (stdin is not a terminal, so there is no prompt)",
    );
  } else {
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      throw new Error(`cannot read the private key file: ${(error as Error).message}`);
    }
  }
  const trimmed = text.trim();
  const hex = trimmed.startsWith("0x") ? trimmed : `0x${trimmed}`;
  // The message never repeats the input: it may be a key with a typo.
  if (!isHex(hex, 32) || !isValidPrivateKey(hexToBytes(hex))) {
    throw new Error("the private key must be 64 hex digits (0x optional) and a valid secp256k1 key");
  }
  return hexToBytes(hex);
}
