import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from "node:fs";
import { failpoint } from "../chain/index.ts";
import { canonicalJson, privateKeyToAddress } from "../crypto/index.ts";
import { type ProposalBody, signBody, type VoteBody } from "./messages.ts";

/** Steps in the order a validator signs them within a round. */
const STEP = { proposal: 1, prevote: 2, precommit: 3 } as const;

/** One line of the signing log: what was signed, at which height/round/step. */
export interface SignedRecord {
  height: number;
  round: number;
  step: number;
  body: VoteBody | ProposalBody;
  signature: string;
}

export class DoubleSignError extends Error {
  override readonly name = "DoubleSignError";
}

/**
 * The validator's key behind a guard that makes double signing impossible, also across a crash:
 * every signature is appended to a log and fsynced before it is returned (so before it can be
 * sent), and nothing is signed at or below the last logged height/round/step unless it is the
 * identical message (then the logged signature is returned again). The log is also the record
 * that tests and operators audit.
 */
export class ConsensusSigner {
  readonly address: string;
  private readonly key: Uint8Array;
  private readonly fd: number;
  private last: SignedRecord | undefined;

  private constructor(key: Uint8Array, fd: number, last: SignedRecord | undefined) {
    this.key = key;
    this.address = privateKeyToAddress(key);
    this.fd = fd;
    this.last = last;
  }

  /** Opens (or creates) the log at `path`; resumes from its last complete record. */
  static open(path: string, key: Uint8Array): ConsensusSigner {
    const fd = openSync(path, "a+");
    const last = lastRecord(fd);
    endWithNewline(fd); // so a torn line never swallows the next record
    return new ConsensusSigner(key, fd, last);
  }

  lastSigned(): SignedRecord | undefined {
    return this.last;
  }

  /** Signs `body`, or throws DoubleSignError when that could contradict an earlier signature. */
  sign(body: VoteBody | ProposalBody): string {
    const record = { height: body.height, round: body.round, step: STEP[body.type] };
    const last = this.last;
    if (last !== undefined) {
      const order = compare(record, last);
      if (order === 0 && canonicalJson(last.body) === canonicalJson(body)) return last.signature;
      if (order <= 0) {
        throw new DoubleSignError(
          `refusing to sign ${body.type} at ${body.height}/${body.round}: already signed ${last.body.type} at ${last.height}/${last.round}`,
        );
      }
    }
    const signed: SignedRecord = { ...record, body, signature: signBody(body, this.key) };
    failpoint("sign.beforeLog");
    writeSync(this.fd, `${JSON.stringify(signed)}\n`);
    failpoint("sign.afterLogWrite");
    fsyncSync(this.fd);
    failpoint("sign.afterFsync");
    this.last = signed;
    return signed.signature;
  }

  close(): void {
    closeSync(this.fd);
  }
}

function compare(a: { height: number; round: number; step: number }, b: SignedRecord): number {
  return a.height - b.height || a.round - b.round || a.step - b.step;
}

/** The last complete line of the log: a torn last line was never fsynced, so never sent. */
function lastRecord(fd: number): SignedRecord | undefined {
  const size = fstatSync(fd).size;
  const length = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  const lines = buffer.toString("utf8").split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i];
    if (line === undefined || line === "") continue;
    try {
      return JSON.parse(line) as SignedRecord;
    } catch {
      // a torn write at the end, or the cut start of the window: look further back
    }
  }
  return undefined;
}

function endWithNewline(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const tail = Buffer.alloc(1);
  readSync(fd, tail, 0, 1, size - 1);
  if (tail[0] === 0x0a) return;
  writeSync(fd, "\n");
  fsyncSync(fd);
}

/** Every record of a signing log, for audits (tests check no height/round/step is signed twice). */
export function readSigningLog(text: string): SignedRecord[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as SignedRecord];
      } catch {
        return [];
      }
    });
}
