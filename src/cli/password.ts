import { readFileSync } from "node:fs";
import { Option } from "commander";

/**
 * Where a key password comes from: `--password-file`, `--password-env`, else a prompt with no echo
 * when stdin is a terminal. Never from argv, where `ps` and shell history would see it.
 */

export interface PasswordFlags {
  passwordFile?: string;
  passwordEnv?: string;
}

export function passwordOptions(): Option[] {
  return [
    new Option("--password-file <file>", "read the key password from the first line of FILE").conflicts(
      "passwordEnv",
    ),
    new Option("--password-env <var>", "read the key password from the environment variable VAR"),
  ];
}

/** The password that unlocks an existing key (`what` names it in the prompt and errors). */
export async function readPassword(flags: PasswordFlags, what: string): Promise<string> {
  return fromFlags(flags) ?? (await promptHidden(`Password for ${what}: `, noPrompt(what)));
}

/** The password for a new key: not empty, and typed twice when prompted. */
export async function readNewPassword(flags: PasswordFlags, what: string): Promise<string> {
  let password = fromFlags(flags);
  if (password === undefined) {
    password = await promptHidden(`New password for ${what}: `, noPrompt(what));
    if (password !== "" && (await promptHidden("Repeat the password: ", noPrompt(what))) !== password) {
      throw new Error("the two passwords differ");
    }
  }
  if (password === "") throw new Error(`refusing an empty password for ${what}`);
  return password;
}

function noPrompt(what: string): string {
  return `${what} needs a password: give --password-file FILE or --password-env VAR (stdin is not a terminal, so there is no prompt)`;
}

function fromFlags(flags: PasswordFlags): string | undefined {
  if (flags.passwordFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.passwordFile, "utf8");
    } catch (error) {
      throw new Error(`cannot read the password file: ${(error as Error).message}`);
    }
    // The first line, so that `echo secret > file` and editors' trailing newlines work.
    return text.split(/\r?\n/, 1)[0] ?? "";
  }
  if (flags.passwordEnv !== undefined) {
    const value = process.env[flags.passwordEnv];
    if (value === undefined) throw new Error(`--password-env: ${flags.passwordEnv} is not set`);
    return value;
  }
  return undefined;
}

/**
 * Reads one line from the terminal without echoing it (raw mode); fails with `noTerminal` when
 * stdin is not a terminal.
 */
export function promptHidden(question: string, noTerminal: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return Promise.reject(new Error(noTerminal));
  // Raw mode before the question, so that nothing typed or pasted at once is echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (error === undefined) resolve(value);
      else reject(error);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return finish();
        // Raw mode turns Ctrl-C into a byte instead of SIGINT; Ctrl-D on an empty line is end of input.
        if (ch === "\u0003" || (ch === "\u0004" && value === "")) return finish(new Error("cancelled"));
        if (ch === "\u007f" || ch === "\b") value = Array.from(value).slice(0, -1).join("");
        else if (ch >= " ") value += ch;
      }
    };
    stdin.setEncoding("utf8");
    stdin.on("data", onData);
    stdin.resume();
  });
}
