// The analyzer codes each instrument has sent, mapped or not: how often, the last value and unit, and when. Kept by the
// ingest transaction from the message's results and its rejections (a rejection carries what the analyzer sent beside
// the code, never a patient field), so the status page lists a new analyzer's codes from its first rejected message
// and the technician can write the mapping from them. One statement a message whatever its size; each instrument keeps
// KEEP_CODES codes, pruned in the very transaction that outgrew them (an analyzer, or anyone on its port, babbling
// random codes never grows the table past them, nor the page that lists it), and once at the writer's start (a table
// from before the bound, or kept under another mapping).
// Which codes are kept: those needing a mapping first, then the most recently seen. "Needing a mapping" is judged when
// the prune runs, against the instrument's mapping then (the one the message that outgrew the bound was decoded with,
// and the page's, after a reload too), by the one rule the page lists codes by (config/mapping-need.ts). It is not
// stored with the row: a reload that maps a code, or unmaps one, would leave a stored verdict stale until the code
// came again, and the store would keep codes the page no longer asks about. A babbler's invented codes all need a
// mapping, so they can fill the bound and push out the mapped ones; those are in the configuration anyway, and every
// code that still needs a mapping stays listed up to the bound.
import type Database from 'better-sqlite3';
import type { AnalyteMapping } from '../config/mapping.js';
import { mappingNeeds } from '../config/mapping-need.js';
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
  private readonly listOne: Database.Statement;
  private readonly count: Database.Statement;
  private readonly over: Database.Statement;
  /** At least as many rows as each instrument holds (a message's codes are counted as new until a count says otherwise). */
  private readonly atMost = new Map<string, number>();
  /** The judgement the prune's SQL calls for each row (labgate_needs_mapping), of the instrument being pruned. */
  private judge: ReturnType<typeof mappingNeeds> = mappingNeeds([]);

  /** `mappingOf` is an instrument's mapping now (undefined: none, every code needs one). */
  constructor(
    private readonly db: Database.Database,
    private readonly mappingOf: (instrumentId: string) => readonly AnalyteMapping[] | undefined = () => undefined,
  ) {
    // Ranked in SQLite, each row judged by a call back here: no row of a babbling analyzer's becomes a JavaScript object.
    db.function('labgate_needs_mapping', { deterministic: false }, (code, unit, value) =>
      this.judge(String(code), unit as string | null, value as string | null).need === null ? 0 : 1,
    );
    this.prune = db.prepare(`DELETE FROM instrument_codes WHERE instrument_id = @id AND code NOT IN (SELECT code FROM instrument_codes
      WHERE instrument_id = @id ORDER BY labgate_needs_mapping(code, last_unit, last_value) DESC, last_at DESC, code LIMIT ${KEEP_CODES})`);
    const columns = 'instrument_id AS instrumentId, code, seen, last_value AS lastValue, last_unit AS lastUnit, last_at AS lastAt';
    this.list = db.prepare(`SELECT ${columns} FROM instrument_codes ORDER BY instrument_id, code`);
    // A read for the page never takes more than the bound, whatever the table holds.
    this.listOne = db.prepare(`SELECT ${columns} FROM instrument_codes WHERE instrument_id = ? ORDER BY last_at DESC LIMIT ${KEEP_CODES}`);
    this.count = db.prepare('SELECT count(*) FROM instrument_codes WHERE instrument_id = ?').pluck();
    this.over = db.prepare(`SELECT instrument_id FROM instrument_codes GROUP BY instrument_id HAVING count(*) > ${KEEP_CODES}`).pluck();
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
    this.pruned(instrumentId);
  }

  private pruned(instrumentId: string): void {
    this.judge = mappingNeeds(this.mappingOf(instrumentId) ?? []);
    this.prune.run({ id: instrumentId });
    this.atMost.set(instrumentId, this.count.get(instrumentId) as number);
  }

  /** Prunes every instrument holding more than KEEP_CODES (the writer's start: a table from before the bound). */
  pruneAll(): void {
    for (const instrumentId of this.over.all() as string[]) this.pruned(instrumentId);
  }

  /** Every code of every instrument, by instrument and code. */
  all(): CodeSeen[] {
    return this.list.all() as CodeSeen[];
  }

  /** One instrument's codes, at most KEEP_CODES, the most recently seen first. */
  of(instrumentId: string): CodeSeen[] {
    return this.listOne.all(instrumentId) as CodeSeen[];
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
