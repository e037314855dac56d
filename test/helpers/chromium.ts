import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/** Debian's Chromium (DESIGN.md §1): playwright-core drives it; no browser is downloaded. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

const APT_TIMEOUT_MS = 10 * 60_000;

function commandExists(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Runs an apt-get command (through sudo when not root); its output tail on failure. */
function aptGet(args: readonly string[]): { ok: true } | { ok: false; output: string } {
  const root = process.getuid?.() === 0;
  const [command, ...rest] = root ? ["apt-get", ...args] : ["sudo", "-n", "apt-get", ...args];
  try {
    execFileSync(command as string, rest, {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: APT_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { ok: true };
  } catch (error) {
    const failure = error as { stdout?: Buffer; stderr?: Buffer; message: string };
    const output =
      `${failure.stdout?.toString() ?? ""}${failure.stderr?.toString() ?? ""}` || failure.message;
    return { ok: false, output: output.trim().split("\n").slice(-15).join("\n") };
  }
}

/**
 * Makes sure Chromium is at /usr/bin/chromium, installing Debian's package if it is not (as root,
 * or with passwordless sudo). Throws with what went wrong when it cannot: a browser test that
 * cannot get its browser fails, it never skips silently.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (process.getuid?.() !== 0 && !commandExists("sudo")) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}, and this user can neither apt-get (not root) nor sudo. ` +
        "Install it first: apt-get install -y chromium",
    );
  }
  // Try with the package lists there are; a fresh machine has none yet, so update and retry.
  let attempt = aptGet(["install", "-y", "chromium"]);
  if (!attempt.ok) {
    const update = aptGet(["update"]);
    if (!update.ok) throw new Error(`apt-get update failed while installing Chromium:\n${update.output}`);
    attempt = aptGet(["install", "-y", "chromium"]);
  }
  if (!attempt.ok) throw new Error(`apt-get install -y chromium failed:\n${attempt.output}`);
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} does not exist`);
  }
  return CHROMIUM_PATH;
}

/** Flags Chromium needs here: root cannot use the sandbox; containers have a small /dev/shm. */
export function chromiumArgs(): string[] {
  const args = ["--disable-dev-shm-usage"];
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  return args;
}
