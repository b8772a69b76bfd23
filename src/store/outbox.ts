// The outbox side of the store: claiming due rows per sink and recording each row's outcome.
// STUB: the delivery-engine work (issue 5) fills this in; the method names below are the agreed contract.
import type Database from 'better-sqlite3';
import type { OutboxRow, Outcome } from '../sinks/sink.js';

/** Outbox operations on the store's one SQLite connection. */
export class Outbox {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  /** Up to `limit` pending rows of `sink` due at `now`, oldest due first; served by the partial index outbox_due. */
  claimDue(_sink: string, _limit: number): OutboxRow[] {
    void this.db;
    void this.now;
    throw new Error('not implemented');
  }

  /** Records one outcome per row in ONE transaction (with the retry time decided by the delivery engine). */
  recordOutcomes(_sink: string, _rows: readonly OutboxRow[], _outcomes: readonly Outcome[], _retryAt: readonly (number | null)[]): void {
    throw new Error('not implemented');
  }

  /** Earliest next_attempt_at of a pending row of `sink`, or null when none is pending. */
  nextDueAt(_sink: string): number | null {
    throw new Error('not implemented');
  }
}
