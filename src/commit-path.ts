// The one path from a complete message to the store, for every driver's runner: the raw bytes are journaled with
// what the decoder made of them, the decoder runs inside a guard (a decoder that throws is a bug, and its message is
// journaled raw and rejected with the error's name, never lost: ARCHITECTURE.md invariant 2), the commit's outcome is
// what the runner answers the analyzer with (invariant 1: an acknowledgment only after the commit that holds the
// message, alone or with the messages that completed during the previous commit), and the runner's events and log
// lines say the same thing in the same words whatever the protocol.
//
// The outcome reaches the runner as a continuation ("commit it, then run this"): at once when the port answers at
// once (a test's port, a refusal), later when it answers with a promise. The gateway's port is a group commit
// (store/group-commit.ts): it gathers the messages of every instrument completing while one commit is made durable
// and answers each after the commit that holds it; each runner takes its next message only after the outcome of
// the one before, so answers keep the order of arrival.
//
// An instrument that sends only rejected messages journals so many a minute at most (rejected-limit.ts); the rest are
// refused like a message the store cannot take, counted, and logged with their counts only.
import type { DecodedMessage, IngestSummary, Protocol } from './message.js';
import { JunkSampler } from './junk-sampler.js';
import { verdictOf } from './rejected-limit.js';
import type { DriverContext, IngestOutcome } from './runner-contract.js';

/** What became of one message: the runner acknowledges `committed` and refuses `unavailable` (NAK, AR, retry). */
export type CommitOutcome = { kind: 'committed'; summary: IngestSummary; decoded: DecodedMessage } | { kind: 'unavailable'; reason: string };

/** How a runner names input that is not a message, in its events, log lines and the sample's rejection. */
export interface JunkLabel {
  /** The discard reason counted on the instrument (`not an HL7 message`). */
  event: string;
  /** One piece and several (`hl7 block`, `blocks`). */
  one: string;
  many: string;
}

/** Log fields a runner adds to the commit path's lines (a control id, a queue length). Never patient data. */
export type CommitDetail = Record<string, string | number | undefined>;

const none = (): CommitDetail => ({});

// Refused before the store: the instrument's rejected messages are over its limit for this minute.
type OverLimit = { kind: 'over-limit'; reason: string };

/** One instrument's commit path; each runner makes one from its context. */
export class CommitPath {
  private readonly sampler: JunkSampler;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly ctx: Pick<DriverContext, 'profile' | 'ingest' | 'accepting' | 'clock' | 'log' | 'onEvent' | 'junk' | 'rejectedLimit'>,
    private readonly protocol: Protocol,
  ) {
    this.sampler = ctx.junk ?? new JunkSampler();
  }

  /**
   * Journals `raw` with what `decode` makes of it, then calls `then` with the commit's outcome. A store that cannot
   * take it (not accepting, a full disk) is `unavailable` and nothing is kept: the analyzer keeps the message.
   * `detail` is read after decoding, for the log line.
   */
  commit(raw: Buffer, decode: () => DecodedMessage, then: (outcome: CommitOutcome) => void, detail: () => CommitDetail = none): void {
    this.journal(raw, decode, (outcome, decoded, receivedAt) => then(this.reported(outcome, decoded, receivedAt, detail)));
  }

  /**
   * Input that is not a message at all: counted, and the first of each interval journaled as a rejected sample that
   * says how many were only counted since the one before. `then` gets whether this one was journaled.
   */
  junk(raw: Buffer, reason: string, label: JunkLabel, then: (sampled: boolean) => void): void {
    const decision = this.sampler.next(this.ctx.clock.now());
    this.ctx.onEvent({ kind: 'discarded', reason: label.event });
    const logged = (sampled: boolean): void => {
      this.ctx.log.warn({ bytes: raw.length, sampled, reason }, `${label.one} that is not a message refused`);
      then(sampled);
    };
    if (decision.kind === 'count') return logged(false);
    const more = decision.unsampled > 0 ? `; ${decision.unsampled} more ${label.many} like it since the last sample were counted, not kept` : '';
    // A sample the store cannot take is only counted: junk is never retried.
    this.journal(
      raw,
      () => ({ results: [], rejections: [{ reason: `${reason}${more}` }] }),
      (outcome) => logged(outcome.kind === 'committed'),
    );
  }

  /** Resolves once every outcome the port still owes has arrived (a runner's stop). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private journal(
    raw: Buffer,
    decode: () => DecodedMessage,
    then: (outcome: IngestOutcome | OverLimit, decoded: DecodedMessage, receivedAt: number) => void,
  ): void {
    const { ctx } = this;
    const empty: DecodedMessage = { results: [], rejections: [] };
    if (!ctx.accepting()) return then({ kind: 'unavailable', reason: 'store not accepting' }, empty, ctx.clock.monotonic());
    const decoded = this.guarded(decode);
    const overLimit = this.limited(raw, decoded);
    if (overLimit) return then(overLimit, decoded, ctx.clock.monotonic());
    const capture = { instrumentId: ctx.profile.id, protocol: this.protocol, receivedAt: ctx.clock.now(), raw };
    const receivedMonotonic = ctx.clock.monotonic();
    let answer: IngestOutcome | Promise<IngestOutcome>;
    try {
      answer = ctx.ingest({ capture, results: decoded.results, rejections: decoded.rejections });
    } catch (err) {
      answer = failed(err);
    }
    if (!(answer instanceof Promise)) return then(answer, decoded, receivedMonotonic);
    const later = answer.catch(failed).then((outcome) => then(outcome, decoded, receivedMonotonic));
    this.inFlight.add(later);
    const done = (): void => void this.inFlight.delete(later);
    later.then(done, (err: unknown) => (done(), ctx.log.error({ err }, `${this.protocol} commit outcome not handled`)));
  }

  // The limit's log lines carry counts only: the first refusal of a minute, and how many were refused once it is over.
  private limited(raw: Buffer, decoded: DecodedMessage): OverLimit | undefined {
    const { ctx } = this;
    const decision = ctx.rejectedLimit?.limit.next(ctx.clock.monotonic(), verdictOf(decoded), raw.length);
    if (decision === undefined) return undefined;
    if (decision.kind === 'journal') {
      if (decision.refusedBefore > 0) ctx.log.warn({ refused: decision.refusedBefore }, 'rejected messages over the limit were refused in the minute before');
      return undefined;
    }
    const { messagesPerMinute, mbPerMinute } = ctx.rejectedLimit!;
    if (decision.first) {
      ctx.log.warn(
        { journaled: decision.journaled, messagesPerMinute, mbPerMinute },
        'only rejected messages, over the limit: refused for the rest of the minute',
      );
    }
    return { kind: 'over-limit', reason: `only rejected messages lately, over ${messagesPerMinute} or ${mbPerMinute} MB a minute: refused` };
  }

  private reported(outcome: IngestOutcome | OverLimit, decoded: DecodedMessage, receivedAt: number, detail: () => CommitDetail): CommitOutcome {
    if (outcome.kind === 'over-limit') {
      this.ctx.onEvent({ kind: 'over-limit' });
      return { kind: 'unavailable', reason: outcome.reason };
    }
    if (outcome.kind === 'unavailable') {
      this.ctx.onEvent({ kind: 'commit-failed', reason: outcome.reason });
      this.ctx.log.warn({ ...detail(), reason: outcome.reason }, `${this.protocol} message not committed`);
      return outcome;
    }
    this.ctx.onEvent({ kind: 'message', summary: outcome.summary, receivedAt });
    this.ctx.log.info(
      { ...detail(), captureId: outcome.summary.captureId, results: decoded.results.length, rejected: decoded.rejections.length },
      `${this.protocol} message committed`,
    );
    return { kind: 'committed', summary: outcome.summary, decoded };
  }

  // A decoder never throws on wire data (it returns rejections); one that does has a bug. The message is journaled
  // raw with a rejection naming the error, so it can be reprocessed once the decoder is fixed. The error's message
  // is not kept: it may quote the message, and rejections and log lines never carry patient data.
  private guarded(decode: () => DecodedMessage): DecodedMessage {
    try {
      return decode();
    } catch (err) {
      const name = err instanceof Error ? err.name : typeof err;
      this.ctx.log.error({ error: name }, `${this.protocol} decoder failed; the message is journaled raw and rejected`);
      return { results: [], rejections: [{ reason: `decoder error (${name}): the message was kept raw for reprocessing` }] };
    }
  }
}

function failed(err: unknown): IngestOutcome {
  return { kind: 'unavailable', reason: `ingest failed: ${err instanceof Error ? err.message : String(err)}` };
}
