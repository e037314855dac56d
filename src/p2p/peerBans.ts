/**
 * Who we refuse to talk to, and until when. A penalty bans a peer for the cool-down; each
 * repeat offence within `FORGET_AFTER_MS` of the last doubles it (up to `MAX_ESCALATION`×), so a
 * peer that keeps sending garbage spends ever longer outside. Pure: time is passed in.
 */
const MAX_ESCALATION = 32;
/** An offence this long after the previous one starts the count again. */
const FORGET_AFTER_MS = 60 * 60 * 1000;
/** Records kept at most; the oldest expired ones go first (a flood of fresh ids cannot grow it). */
const MAX_RECORDS = 10_000;

interface BanRecord {
  /** Offences in the current run (1 after the first). */
  strikes: number;
  bannedUntil: number;
  lastOffenceAt: number;
  reason: string;
}

export class PeerBans {
  private readonly cooldownMs: number;
  private readonly records = new Map<string, BanRecord>();

  constructor(cooldownMs: number) {
    this.cooldownMs = cooldownMs;
  }

  /** Records an offence; returns how long the peer is now banned, ms. */
  penalize(peerId: string, reason: string, now: number): number {
    const previous = this.records.get(peerId);
    const strikes =
      previous !== undefined && now - previous.lastOffenceAt < FORGET_AFTER_MS ? previous.strikes + 1 : 1;
    const durationMs = this.cooldownMs * Math.min(2 ** (strikes - 1), MAX_ESCALATION);
    this.records.delete(peerId);
    this.records.set(peerId, { strikes, bannedUntil: now + durationMs, lastOffenceAt: now, reason });
    this.trim(now);
    return durationMs;
  }

  /** Refuses the peer for one cool-down without counting a strike (e.g. another chain). */
  refuse(peerId: string, reason: string, now: number): void {
    const previous = this.records.get(peerId);
    const bannedUntil = Math.max(previous?.bannedUntil ?? 0, now + this.cooldownMs);
    this.records.delete(peerId);
    this.records.set(peerId, {
      strikes: previous?.strikes ?? 0,
      bannedUntil,
      lastOffenceAt: previous?.lastOffenceAt ?? now,
      reason,
    });
    this.trim(now);
  }

  isBanned(peerId: string, now: number): boolean {
    const record = this.records.get(peerId);
    return record !== undefined && record.bannedUntil > now;
  }

  /** The reason of a current ban, for logs. */
  reasonOf(peerId: string, now: number): string | undefined {
    const record = this.records.get(peerId);
    return record !== undefined && record.bannedUntil > now ? record.reason : undefined;
  }

  /** Forgets records whose ban ended and whose offences are forgotten. */
  prune(now: number): void {
    for (const [peerId, record] of this.records) {
      if (record.bannedUntil <= now && now - record.lastOffenceAt >= FORGET_AFTER_MS) {
        this.records.delete(peerId);
      }
    }
  }

  get size(): number {
    return this.records.size;
  }

  private trim(now: number): void {
    if (this.records.size <= MAX_RECORDS) return;
    this.prune(now);
    // Still too many: drop the least recently offending (Map keeps insertion order).
    for (const peerId of this.records.keys()) {
      if (this.records.size <= MAX_RECORDS) break;
      this.records.delete(peerId);
    }
  }
}
