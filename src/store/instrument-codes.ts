// The analyzer codes each instrument has sent, mapped or not: how often, the last value and unit, and when. Kept by the
// ingest transaction from the message's results and its rejections (a rejection carries what the analyzer sent beside
// the code, never a patient field), so the status page lists a new analyzer's codes from its first rejected message
// and the technician can write the mapping from them. One statement a message whatever its size; each instrument keeps
// its KEEP_CODES most recently seen codes, pruned in the very transaction that outgrew them (an analyzer, or anyone on
// its port, babbling random codes never grows the table past them, nor the page that lists it).
import type Database from 'better-sqlite3';
import type { KeyedResult } from '../result.js';
import type { Rejection } from '../message.js';

/** Codes kept per instrument, the most recently seen. */
export const KEEP_CODES = 500;
/** A value longer than this is kept cut, with an ellipsis. */
const VALUE_CHARS = 120;
const CHUNK = 64;

/** One code as the page lists it. */
export interface CodeSeen {
  instrumentId: string;
  code: string;
  seen: number;
  lastValue: string | null;
  lastUnit: string | null;
  /** Epoch ms the message carrying it was received. */
  lastAt: number;
}

interface Tally {
  seen: number;
  value: string | null;
  unit: string | null;
}

/** The codes-seen table on the store's connection; `message` runs inside the caller's transaction. */
export class InstrumentCodes {
  private readonly byCount = new Map<number, Database.Statement>();
  private readonly prune: Database.Statement;
  private readonly list: Database.Statement;
  private readonly count: Database.Statement;
  /** At least as many rows as each instrument holds (a message's codes are counted as new until a count says otherwise). */
  private readonly atMost = new Map<string, number>();

  constructor(private readonly db: Database.Database) {
    this.prune = db.prepare(`DELETE FROM instrument_codes WHERE instrument_id = ? AND code NOT IN
      (SELECT code FROM instrument_codes WHERE instrument_id = ? ORDER BY last_at DESC LIMIT ${KEEP_CODES})`);
    this.list = db.prepare(`SELECT instrument_id AS instrumentId, code, seen, last_value AS lastValue, last_unit AS lastUnit,
      last_at AS lastAt FROM instrument_codes ORDER BY instrument_id, code`);
    this.count = db.prepare('SELECT count(*) FROM instrument_codes WHERE instrument_id = ?').pluck();
  }

  /** Counts the codes of one message received at `receivedAt`: its stored results and its rejections. */
  message(instrumentId: string, receivedAt: number, results: readonly KeyedResult[], rejections: readonly Rejection[]): void {
    const codes = new Map<string, Tally>();
    for (const r of results) add(codes, r.source.analyzerCode, r.valueText, r.unit);
    for (const r of rejections) if (r.analyzerCode !== undefined) add(codes, r.analyzerCode, r.observed?.value ?? null, r.observed?.unit ?? null);
    const rows = [...codes];
    for (let from = 0; from < rows.length; from += CHUNK) {
      const chunk = rows.slice(from, from + CHUNK);
      this.statement(chunk.length).run(chunk.flatMap(([code, t]) => [instrumentId, code, t.seen, t.value, t.unit, receivedAt]));
    }
    if (rows.length > 0) this.bound(instrumentId, rows.length);
  }

  // Counting and pruning only when the rows might exceed KEEP_CODES: a steady analyzer's known codes cost neither.
  private bound(instrumentId: string, added: number): void {
    const atMost = (this.atMost.get(instrumentId) ?? (this.count.get(instrumentId) as number)) + added;
    if (atMost <= KEEP_CODES) return void this.atMost.set(instrumentId, atMost);
    this.prune.run(instrumentId, instrumentId);
    this.atMost.set(instrumentId, this.count.get(instrumentId) as number);
  }

  /** Every code of every instrument, by instrument and code. */
  all(): CodeSeen[] {
    return this.list.all() as CodeSeen[];
  }

  // A value seen with no code is not counted; the last of several results with one code in a message wins.
  private statement(count: number): Database.Statement {
    let statement = this.byCount.get(count);
    if (statement === undefined) {
      statement = this.db.prepare(`INSERT INTO instrument_codes (instrument_id, code, seen, last_value, last_unit, last_at)
        VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}
        ON CONFLICT (instrument_id, code) DO UPDATE SET seen = seen + excluded.seen, last_value = excluded.last_value,
        last_unit = excluded.last_unit, last_at = max(last_at, excluded.last_at)`);
      this.byCount.set(count, statement);
    }
    return statement;
  }
}

function add(codes: Map<string, Tally>, code: string, value: string | null, unit: string | null): void {
  if (code === '') return;
  const cut = value !== null && value.length > VALUE_CHARS ? `${value.slice(0, VALUE_CHARS)}…` : value;
  const t = codes.get(code);
  if (t === undefined) codes.set(code, { seen: 1, value: cut, unit });
  else codes.set(code, { seen: t.seen + 1, value: cut, unit });
}
