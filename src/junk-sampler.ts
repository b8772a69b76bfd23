// Input that is not a message at all (no MSH segment, no H record: line noise, a port scanner, a sender of the wrong
// protocol) is counted, and one sample per interval is journaled as a rejected capture, so a technician sees what
// arrives and why it was refused without a flood of garbage filling the SD card capture by capture. Anything that IS a
// message, however broken, is journaled every time (ARCHITECTURE.md invariant 2); deciding which is which is the
// driver's rule. One sampler per instrument, kept across its sessions, so reconnecting does not reset it.

/** Default: one sample a minute per instrument. */
export const JUNK_SAMPLE_INTERVAL_MS = 60_000;

/** What to do with one piece of junk. */
export type JunkDecision = { kind: 'journal'; unsampled: number } | { kind: 'count' };

/** Decides which junk is journaled as a sample; pure apart from its counters (time is passed in). */
export class JunkSampler {
  private nextSampleAt = -Infinity;
  private unsampled = 0;

  constructor(private readonly intervalMs = JUNK_SAMPLE_INTERVAL_MS) {}

  /** The first junk of each interval is journaled, with how many were only counted since the last sample. */
  next(now: number): JunkDecision {
    if (now < this.nextSampleAt) {
      this.unsampled += 1;
      return { kind: 'count' };
    }
    this.nextSampleAt = now + this.intervalMs;
    const unsampled = this.unsampled;
    this.unsampled = 0;
    return { kind: 'journal', unsampled };
  }
}
