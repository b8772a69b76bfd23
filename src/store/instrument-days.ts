// Per-instrument figures of each day, kept by the ingest transaction itself: messages received, results first stored,
// results rejected on arrival, and the last message's time. The status page reads "today" and "last message" from
// here with one small query, so after a crash, a power cut or an upgrade it shows what the store holds rather than
// what one process counted. "Today" is the gateway's local calendar day, as the technician at the bench reads it; a
// message counts on the day it was received (a reprocess adds its newly stored results to that day, never a message).
// A replay adds a message and no result. Each instrument keeps KEEP_DAYS of days; its newest day is never pruned.
// The same figures are kept per hour (epoch hours, so a day's chart reads the same across a change of clock zone) for
// the page's day at a glance; each instrument keeps KEEP_HOURS of them.
import type Database from 'better-sqlite3';

/** Days of figures kept per instrument (the page needs only today and the newest day). */
export const KEEP_DAYS = 31;
/** Hours of figures kept per instrument (the page charts the last 24). */
export const KEEP_HOURS = 48;
const HOUR_MS = 3_600_000;

/** One instrument's figures of one hour (`hour` is epoch ms / 3,600,000). */
export interface HourFigures {
  instrumentId: string;
  hour: number;
  messages: number;
  results: number;
  rejected: number;
}

/** `YYYY-MM-DD` of the local calendar day holding `at` (the process's time zone, like SQLite's 'localtime'). */
export function localDay(at: number): string {
  const d = new Date(at);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** One instrument's figures for the day asked for, and its last message ever kept. */
export interface InstrumentFigures {
  instrumentId: string;
  messages: number;
  results: number;
  rejected: number;
  /** Epoch ms of the newest message received, or null. */
  lastMessageAt: number | null;
}

/** The day counters on the store's connection; write methods run inside the caller's transaction. */
export class InstrumentDays {
  private readonly add: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly read: Database.Statement;
  private readonly addHour: Database.Statement;
  private readonly pruneHours: Database.Statement;
  private readonly readHours: Database.Statement;
  /** The day each instrument was last counted on by this process: a new day prunes that instrument's old ones. */
  private readonly current = new Map<string, string>();
  /** The same for hours. */
  private readonly currentHour = new Map<string, number>();

  constructor(
    db: Database.Database,
    private readonly dayOf: (at: number) => string = localDay,
  ) {
    this.add = db.prepare(`INSERT INTO instrument_days (instrument_id, day, messages, results, rejected, last_message_at)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (instrument_id, day) DO UPDATE SET messages = messages + excluded.messages,
      results = results + excluded.results, rejected = rejected + excluded.rejected,
      last_message_at = CASE WHEN excluded.last_message_at > coalesce(last_message_at, 0) THEN excluded.last_message_at ELSE last_message_at END`);
    this.prune = db.prepare('DELETE FROM instrument_days WHERE instrument_id = ? AND day < ?');
    this.read = db.prepare(`SELECT instrument_id AS instrumentId,
      sum(CASE WHEN day = ? THEN messages ELSE 0 END) AS messages, sum(CASE WHEN day = ? THEN results ELSE 0 END) AS results,
      sum(CASE WHEN day = ? THEN rejected ELSE 0 END) AS rejected, max(last_message_at) AS lastMessageAt
      FROM instrument_days GROUP BY instrument_id ORDER BY instrument_id`);
    this.addHour = db.prepare(`INSERT INTO instrument_hours (instrument_id, hour, messages, results, rejected) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (instrument_id, hour) DO UPDATE SET messages = messages + excluded.messages, results = results + excluded.results,
      rejected = rejected + excluded.rejected`);
    this.pruneHours = db.prepare('DELETE FROM instrument_hours WHERE instrument_id = ? AND hour < ?');
    this.readHours = db.prepare(`SELECT instrument_id AS instrumentId, hour, messages, results, rejected FROM instrument_hours
      WHERE hour >= ? ORDER BY instrument_id, hour`);
  }

  /** Counts one message received at `receivedAt` with the results it stored and rejected. */
  message(instrumentId: string, receivedAt: number, results: number, rejected: number): void {
    const day = this.dayOf(receivedAt);
    const hour = Math.floor(receivedAt / HOUR_MS);
    this.add.run(instrumentId, day, 1, results, rejected, receivedAt);
    this.addHour.run(instrumentId, hour, 1, results, rejected);
    if (this.currentHour.get(instrumentId) !== hour) {
      this.currentHour.set(instrumentId, hour);
      this.pruneHours.run(instrumentId, hour - KEEP_HOURS);
    }
    if (this.current.get(instrumentId) === day) return;
    this.current.set(instrumentId, day);
    this.prune.run(instrumentId, this.dayOf(receivedAt - KEEP_DAYS * 86_400_000));
  }

  /** Adds results a reprocess stored to the day (and hour) their message was received. */
  reprocessed(instrumentId: string, receivedAt: number, results: number): void {
    if (results === 0) return;
    this.add.run(instrumentId, this.dayOf(receivedAt), 0, results, 0, null);
    this.addHour.run(instrumentId, Math.floor(receivedAt / HOUR_MS), 0, results, 0);
  }

  /** Every instrument's figures per hour from `sinceHour` (epoch hours) on; hours without a message are absent. */
  hours(sinceHour: number): HourFigures[] {
    return this.readHours.all(sinceHour) as HourFigures[];
  }

  /** Every instrument's figures for `day` (zero when it sent nothing that day) and its last message time. */
  figures(day: string): InstrumentFigures[] {
    return this.read.all(day, day, day) as InstrumentFigures[];
  }
}
