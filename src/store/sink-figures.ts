// Each sink's backlog through the day, for the page's chart. The backlog changes only when a message is committed or a
// delivery outcome is recorded (or an operator acts), so the gateway samples the pending count it already keeps at
// those moments, at most once per SLOT_MS; between two samples the backlog stood still. A sample is one small row;
// samples older than KEEP_MS go with the next one. Deliveries per hour come from outbox_sent_minutes, written by the
// delivery side when rows are marked sent (outbox.ts).
import type Database from 'better-sqlite3';

/** One sample per sink at most this often. */
export const SLOT_MS = 300_000;
/** Samples kept: a day and the hour before it, so the first hour of a 24-hour chart has its starting level. */
export const KEEP_MS = 25 * 3_600_000;

/** A sink's pending count at an instant. */
export interface BacklogSample {
  sink: string;
  at: number;
  pending: number;
}

/** Deliveries of one sink in one hour (`hour` is epoch ms / 3,600,000). */
export interface SinkHour {
  sink: string;
  hour: number;
  delivered: number;
}

/** Backlog samples and hourly deliveries on the store's connection. */
export class SinkFigures {
  private readonly put: Database.Statement;
  private readonly forget: Database.Statement;
  private readonly read: Database.Statement;
  private readonly sentHours: Database.Statement;
  private readonly record: Database.Transaction<(samples: readonly { sink: string; pending: number }[], at: number) => void>;

  constructor(db: Database.Database) {
    this.put = db.prepare('INSERT OR REPLACE INTO sink_backlog (sink, slot, at, pending) VALUES (?, ?, ?, ?)');
    this.forget = db.prepare('DELETE FROM sink_backlog WHERE slot < ?');
    this.read = db.prepare('SELECT sink, at, pending FROM sink_backlog WHERE at >= ? ORDER BY sink, at');
    this.sentHours = db.prepare(`SELECT sink, minute / 60 AS hour, sum(n) AS delivered FROM outbox_sent_minutes
      WHERE minute >= ? GROUP BY sink, minute / 60 ORDER BY sink, hour`);
    this.record = db.transaction((samples, at) => {
      const slot = Math.floor(at / SLOT_MS);
      for (const s of samples) this.put.run(s.sink, slot, at, s.pending);
      this.forget.run(slot - KEEP_MS / SLOT_MS);
    });
  }

  /** Records each sink's pending count at `at` (one row per sink and slot: a later sample in the slot replaces it). */
  sampleBacklog(samples: readonly { sink: string; pending: number }[], at: number): void {
    this.record.immediate(samples, at);
  }

  /** Every sample from `since` (epoch ms) on, by sink and time. */
  backlogSince(since: number): BacklogSample[] {
    return this.read.all(since) as BacklogSample[];
  }

  /** Deliveries per sink and hour from `sinceHour` (epoch hours) on; hours without one are absent. */
  deliveredPerHour(sinceHour: number): SinkHour[] {
    return this.sentHours.all(sinceHour * 60) as SinkHour[];
  }
}
