/**
 * Peer software the bench compares against, installed on demand into the git-ignored folder
 * `bench/.peers/` (never a dependency in package.json: ganache is about 180 MB with native parts,
 * hardhat about 290 MB, its EDR runtime shipping a native binary for every platform, and CI must not
 * install them). Versions are pinned exactly; an install that is already there with those versions
 * is reused. All of them are installed by one `npm install`: a later `npm install --no-save` naming
 * only some would remove the others. Code loads the packages from that folder with `peerRequire`.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { ROOT, spawnNode } from "./procs.ts";

export const PEERS_DIR = join(ROOT, "bench/.peers");

/** The exact versions installed and loaded. */
export const PEER_VERSIONS = { ganache: "7.9.2", hardhat: "2.29.1", "@ethereumjs/tx": "10.1.3" } as const;

/** `require` resolving from bench/.peers (the packages there are CommonJS or ship a CommonJS build). */
export const peerRequire = createRequire(join(PEERS_DIR, "package.json"));

/** The installed version of `name` in bench/.peers, if any. */
function installedVersion(name: string): string | undefined {
  try {
    const file = join(PEERS_DIR, "node_modules", name, "package.json");
    return (JSON.parse(readFileSync(file, "utf8")) as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** npm's CLI script: the one running this bench (`npm run bench`), else the `npm` on PATH. */
function npmCli(): string | undefined {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm !== undefined && /npm-cli\.[cm]?js$/.test(fromNpm) && existsSync(fromNpm)) return fromNpm;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "npm");
    if (!existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (/npm-cli\.[cm]?js$/.test(real)) return real;
  }
  return undefined;
}

/** How long the first install may take before it is given up (a registry that does not answer). */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * Makes sure bench/.peers holds the pinned versions, installing them with npm the first time.
 * Resolves with undefined when they are there, or with the reason they could not be installed.
 */
export async function ensurePeers(log: (message: string) => void): Promise<string | undefined> {
  const wanted = Object.entries(PEER_VERSIONS);
  const missing = wanted.filter(([name, version]) => installedVersion(name) !== version);
  if (missing.length === 0) return undefined;
  const cli = npmCli();
  if (cli === undefined) return "npm was not found (neither npm_execpath nor an npm on PATH)";
  const specs = wanted.map(([name, version]) => `${name}@${version}`);
  log(`installing ${specs.join(" ")} into bench/.peers (first run only; about 470 MB)`);
  const started = Date.now();
  // npm runs under the same pinned Node as the bench, as a tracked child: Ctrl-C stops it too.
  const npm = spawnNode("npm install (peers)", [
    cli,
    "install",
    "--prefix",
    PEERS_DIR,
    "--no-save",
    "--no-audit",
    "--no-fund",
    "--fetch-retries=1",
    ...specs,
  ]);
  npm.child.stdin?.end();
  const timer = setTimeout(() => void npm.stop(), INSTALL_TIMEOUT_MS);
  const code = await npm.exited;
  clearTimeout(timer);
  const still = wanted.filter(([name, version]) => installedVersion(name) !== version);
  if (code !== 0 || still.length > 0) {
    // npm's first error lines say what went wrong (code, the failed fetch); the last ones are advice.
    const errors = npm
      .stderr()
      .split("\n")
      .filter((line) => line.startsWith("npm error "))
      .slice(0, 4)
      .map((line) => line.slice("npm error ".length));
    return `npm install ${specs.join(" ")} failed (exit ${code}): ${errors.join("; ") || "no output"}`;
  }
  log(`installed ${specs.join(" ")} in ${Math.round((Date.now() - started) / 1000)} s`);
  return undefined;
}
