// A sink seen through the demo's window: every outcome is reported (for the progress lines), and the demo can
// simulate the gateway dying in the middle of a delivery. `freeze()` is that instant: answers still on their way
// never reach the drain, so the store records nothing about them, exactly as after a power cut; the sink itself
// (PostgreSQL, the LIMS) may well have applied them. `holdNextAnswer()` makes sure one batch is in that state.
import type { OutboxRow, Outcome, Sink } from '../delivery/contract.js';

/** Called with each batch and its outcomes, as the drain receives them. */
export type OutcomeListener = (sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[]) => void;

/** Rows whose answers were lost when the gateway "died". */
export interface LostAnswers {
  rows: OutboxRow[];
  /** How many of them the sink had already applied (its answer was on the way). */
  applied: number;
}

/** A Sink wrapper that reports outcomes and can lose the answers in flight. */
export class ObservedSink implements Sink {
  readonly name: string;
  private frozen = false;
  private released = false;
  private holdNext = false;
  private readonly waiting = new Set<() => void>();
  private readonly lost: OutboxRow[] = [];
  private lostApplied = 0;

  constructor(
    private readonly inner: Sink,
    private readonly listener: OutcomeListener,
  ) {
    this.name = inner.name;
  }

  async deliver(batch: readonly OutboxRow[], signal: AbortSignal): Promise<Outcome[]> {
    if (this.frozen) return this.lose(batch, 0);
    const hold = this.holdNext;
    this.holdNext = false;
    const outcomes = await this.inner.deliver(batch, signal);
    const applied = outcomes.filter((o) => o.kind === 'delivered').length;
    if (this.frozen || hold) return this.lose(batch, applied);
    this.listener(this.name, batch, outcomes);
    return outcomes;
  }

  /** The next batch is delivered to the sink, but its answer waits for the crash and is lost with it. */
  holdNextAnswer(): void {
    this.holdNext = true;
  }

  /** The gateway dies now: answers in flight, and any batch started from here on, are never answered. */
  freeze(): void {
    this.frozen = true;
  }

  /** Ends the calls left hanging by freeze(), so a dead gateway's drains can be torn down; the store is already closed. */
  release(): void {
    this.released = true;
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }

  /** What the crash cost this sink: rows delivered (or not) whose outcome the store never learnt. */
  lostAnswers(): LostAnswers {
    return { rows: [...this.lost], applied: this.lostApplied };
  }

  close(): Promise<void> {
    this.release();
    return this.inner.close();
  }

  private lose(batch: readonly OutboxRow[], applied: number): Promise<Outcome[]> {
    this.lost.push(...batch);
    this.lostApplied += applied;
    const never = (): Outcome[] => batch.map(() => ({ kind: 'retry', reason: 'the gateway stopped before hearing the answer', scope: 'sink' }));
    if (this.released) return Promise.resolve(never());
    return new Promise((resolve) => this.waiting.add(() => resolve(never())));
  }
}
