/**
 * The admission baseline: how many secp256k1 public-key recoveries one core does, measured in its
 * own process. Two loops over 1,024 pre-made signatures, each for a fixed time:
 *  - raw:           the library call alone (`recoverPublicKey`: libsecp256k1 through N-API, or noble);
 *  - recoverSigner: what admission runs per transaction for its signature (hex parse, embedded hash
 *                   compare, v decode, low-s check, recovery, keccak address, EIP-55 checksum).
 *
 * Usage: node --import tsx bench/recoverRate.ts <seconds per loop>. Prints one JSON line (with the
 * machine's CPU use over the loops, so the bench can tell a run that other processes disturbed).
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import {
  hexToBytes,
  recoverPublicKey,
  recoverSigner,
  SECP256K1_BACKEND,
  signHash,
} from "../src/crypto/index.ts";
import { machineCpu } from "./procs.ts";

export interface RecoverResult {
  backend: string;
  rawPerS: number;
  recoverSignerPerS: number;
}

/** Busy CPU of the machine and of this process over both loops, % of one core. */
function usageSince(start: { machine: ReturnType<typeof machineCpu>; own: NodeJS.CpuUsage; at: number }) {
  const wall = (performance.now() - start.at) / 1000;
  const own = process.cpuUsage(start.own);
  const ownPct = (own.user + own.system) / 1e4 / wall;
  const machine = machineCpu();
  if (machine === undefined || start.machine === undefined) {
    return { machineBusyPct: undefined, machineStealPct: undefined, otherCpuPct: undefined };
  }
  const machineBusyPct = ((machine.busy - start.machine.busy) / wall) * 100;
  return {
    machineBusyPct,
    machineStealPct: ((machine.steal - start.machine.steal) / wall) * 100,
    otherCpuPct: machineBusyPct - ownPct,
  };
}

const CHAIN_ID = 100;
const seconds = Number(process.argv[2] ?? "3");

interface Sample {
  hash: Uint8Array;
  signature: string;
  compact: Uint8Array;
  recid: number;
}

const samples: Sample[] = [];
for (let i = 0; i < 1024; i++) {
  const hash = new Uint8Array(randomBytes(32));
  const signature = signHash(hash, new Uint8Array(randomBytes(32)), CHAIN_ID);
  const bytes = hexToBytes(signature);
  const v = bytes[96] as number;
  samples.push({ hash, signature, compact: bytes.slice(32, 96), recid: (v - 35) & 1 });
}

/** Calls `step(i)` in batches until `seconds` have passed; returns calls per second. */
function rate(step: (sample: Sample) => boolean): number {
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  let count = 0;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 256; i++) {
      if (!step(samples[(count + i) & 1023] as Sample)) throw new Error("a signature did not recover");
    }
    count += 256;
    now = performance.now();
  }
  return count / ((now - start) / 1000);
}

const start = { machine: machineCpu(), own: process.cpuUsage(), at: performance.now() };
const rawPerS = rate((s) => recoverPublicKey(s.hash, s.compact, s.recid) !== undefined);
const recoverSignerPerS = rate((s) => recoverSigner(s.signature, s.hash, CHAIN_ID).ok);
const result = { backend: SECP256K1_BACKEND, rawPerS, recoverSignerPerS, ...usageSince(start) };
console.log(JSON.stringify(result));
