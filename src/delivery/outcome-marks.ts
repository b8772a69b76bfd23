// The drains' outcome marks, written together: the batches of every sink recorded within `delayMs` of the first one
// waiting go in ONE transaction (at once when `maxRows` rows wait). Two sinks delivering the same results mark the same
// outbox pages, the outbox_due index and the sent counters; written together, each such page reaches the WAL (and the
// SD card) once instead of once per batch, and a drain at full speed makes a fraction of the transactions.
// Durability is the marks' own (outbox.ts): a mark waiting here keeps its rows in flight, never claimed again, and one
// lost to a crash only means a re-delivery every sink absorbs (ARCHITECTURE.md invariant 5), as for any unsynced mark.
import type { Clock } from '../clock.js';
import type { OutboxRow, Outcome } from './contract.js';
import type { DrainOutbox } from './drain.js';
import type { Outbox } from '../store/outbox.js';
import type { OutcomeBatch } from '../store/outbox-outcomes.js';

/** How long a mark may wait for others, and how many rows make a transaction worth writing at once. */
export interface MarkPacing {
  delayMs: number;
  maxRows: number;
}

/** A lab's two sinks answer the same message within tens of milliseconds; a drain at full speed fills maxRows sooner. */
export const defaultMarkPacing: MarkPacing = { delayMs: 100, maxRows: 2_000 };

interface Waiting {
  batch: OutcomeBatch;
  settle: (error?: unknown) => void;
}

/** The store's outbox as every sink's drain sees it, with their outcome marks written together. */
export class OutcomeMarks implements DrainOutbox {
  private waiting: Waiting[] = [];
  private rows = 0;
  private timer: { handle: unknown } | null = null;

  constructor(
    private readonly outbox: Pick<Outbox, 'claimDue' | 'release' | 'nextDueAt' | 'recordBatches'>,
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
    private readonly pacing: MarkPacing = defaultMarkPacing,
  ) {}

  claimDue(sink: string, limit: number): OutboxRow[] {
    return this.outbox.claimDue(sink, limit);
  }

  release(sink: string, rows: readonly OutboxRow[]): void {
    this.outbox.release(sink, rows);
  }

  nextDueAt(sink: string): number | null {
    return this.outbox.nextDueAt(sink);
  }

  /** Resolves once the batch's outcomes are written (with the others waiting), or rejects with the store's refusal. */
  recordOutcomes(sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ batch: { sink, rows, outcomes, retryAt }, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      this.rows += rows.length;
      if (this.rows >= this.pacing.maxRows) this.flush();
      else this.timer ??= { handle: this.clock.setTimeout(() => this.flush(), this.pacing.delayMs) };
    });
  }

  /** Writes every waiting mark now (a drain stopping need not wait for the delay). */
  flush(): void {
    if (this.timer) this.clock.clearTimeout(this.timer.handle);
    this.timer = null;
    const taken = this.waiting;
    this.waiting = [];
    this.rows = 0;
    if (taken.length === 0) return;
    let failure: unknown;
    try {
      this.outbox.recordBatches(taken.map((w) => w.batch));
    } catch (err) {
      failure = err ?? new Error('recording outcomes failed');
    }
    for (const w of taken) w.settle(failure);
  }
}
