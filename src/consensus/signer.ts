import {
  closeSync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from "node:fs";
import { dirname } from "node:path";
import { failpoint } from "../faults/index.ts";
import { canonicalJson, privateKeyToAddress } from "../crypto/index.ts";
import { type ProposalBody, type SignedProposal, signBody, type VoteBody } from "./messages.ts";

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
 * What the consensus engine signs with: a key that refuses (`DoubleSignError`) to sign a second,
 * different message for a height/round/step, and keeps what it signed so that a restart resumes
 * from it. `ConsensusSigner` is the node's; tests and the simulation may use lighter ones.
 */
export interface VoteSigner {
  readonly address: string;
  /** The signature of `body`; throws DoubleSignError instead of signing behind or beside the last record. */
  sign(body: VoteBody | ProposalBody): string;
  lastSigned(): SignedRecord | undefined;
  signedAtOpen(height: number): SignedRecord[];
  saveProposal(proposal: SignedProposal): void;
  savedProposals(height: number): SignedProposal[];
}

/**
 * The validator's key behind a guard that makes double signing impossible, also across a crash:
 * every signature is appended to a log and fsynced before it is returned (so before it can be
 * sent), and nothing is signed at or below the last logged height/round/step unless it is the
 * identical message (then the logged signature is returned again). The log is also the record
 * that tests and operators audit.
 */
export class ConsensusSigner implements VoteSigner {
  readonly address: string;
  private readonly key: Uint8Array;
  private readonly fd: number;
  private readonly proposalPath: string;
  private last: SignedRecord | undefined;
  /** What the tail of the log held at open: the records a restart mid-height resumes from. */
  private readonly opened: SignedRecord[];
  private saved: SignedProposal[];

  private constructor(key: Uint8Array, fd: number, tail: SignedRecord[], proposalPath: string) {
    this.key = key;
    this.address = privateKeyToAddress(key);
    this.fd = fd;
    this.opened = tail;
    this.last = tail.at(-1);
    this.proposalPath = proposalPath;
    this.saved = loadProposals(proposalPath);
  }

  /**
   * Opens (or creates) the log at `path`; resumes from its last complete record. Beside it,
   * `<name>.proposal.json` keeps the proposals (with their blocks) this validator proposed or voted
   * for at its latest height.
   */
  static open(path: string, key: Uint8Array): ConsensusSigner {
    const fd = openSync(path, "a+");
    const tail = tailRecords(fd);
    endWithNewline(fd); // so a torn line never swallows the next record
    return new ConsensusSigner(key, fd, tail, `${path.replace(/\.jsonl$/, "")}.proposal.json`);
  }

  lastSigned(): SignedRecord | undefined {
    return this.last;
  }

  /** The records of `height` the log held when it was opened (a restart resumes with them). */
  signedAtOpen(height: number): SignedRecord[] {
    return this.opened.filter((record) => record.height === height);
  }

  /**
   * Keeps `proposal` durably (write, fsync, rename, fsync the directory) before this validator signs it or votes for
   * its block, so that a restart mid-height still holds the blocks its signatures are about:
   * without them, a validator that precommitted a block and crashed before committing it could
   * only go on to another block at that height — with more than 2/3 of the stake (a one-validator
   * network) its lone precommit may already have been a certificate of the first one: a fork.
   * Every proposal of the height is kept (a later round's must not push out the one precommitted);
   * the first of a new height replaces them.
   */
  saveProposal(proposal: SignedProposal): void {
    const { height, round, block_hash } = proposal.proposal;
    const same = (p: SignedProposal) =>
      p.proposal.height === height && p.proposal.round === round && p.proposal.block_hash === block_hash;
    if (this.saved.some(same)) return;
    const kept = [...this.saved.filter((p) => p.proposal.height === height), proposal];
    const temporary = `${this.proposalPath}.tmp`;
    const fd = openSync(temporary, "w");
    try {
      writeSync(fd, JSON.stringify(kept));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.proposalPath);
    // The rename is durable only once the directory is: without this, a power loss could bring
    // back the previous file while the signing log (fsynced next) says this block was voted for.
    syncDirectory(dirname(this.proposalPath));
    this.saved = kept;
  }

  /** The proposals of the latest height kept by saveProposal (also across a restart). */
  savedProposals(height: number): SignedProposal[] {
    return this.saved.filter((p) => p.proposal.height === height);
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

/**
 * The complete records in the last 64 KiB of the log, oldest first: a torn last line was never
 * fsynced, so never sent; the first line of the window may be cut. A height's own signatures
 * (three per round) are far fewer than the window holds.
 */
function tailRecords(fd: number): SignedRecord[] {
  const size = fstatSync(fd).size;
  const length = Math.min(size, 64 * 1024);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  const records: SignedRecord[] = [];
  for (const line of buffer.toString("utf8").split("\n")) {
    if (line === "") continue;
    try {
      records.push(JSON.parse(line) as SignedRecord);
    } catch {
      // a torn write at the end, or the cut start of the window
    }
  }
  return records;
}

function syncDirectory(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function loadProposals(path: string): SignedProposal[] {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as SignedProposal[];
  } catch {
    return []; // none yet (a torn write never happens: it is renamed into place)
  }
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
