// The commit path of a message: its capture journaled, its results written, the day figures and codes seen
// counted, every rejection audited, all inside ONE synchronous transaction (durable before ACK, ARCHITECTURE.md
// invariant 1), alone, as one savepoint of a group, or again for a rejected capture after a configuration fix.
import type Database from 'better-sqlite3';
import { LabgateError } from '../errors.js';
import type { Capture, DecodedMessage, InboundMessage, IngestSummary, Rejection } from '../message.js';
import { sha256Hex } from '../payload.js';
import type { KeyedResult } from '../result.js';
import type { CaptureJournal } from './captures.js';
import { validateResults, type ResultWriter } from './ingest.js';
import type { InstrumentCodes } from './instrument-codes.js';
import type { InstrumentDays } from './instrument-days.js';

/** Who ingest writes as in the audit log. */
export const GATEWAY_ACTOR = 'gateway';

/** The parts of the store a message's commit writes to. */
export interface CommitParts {
  journal: CaptureJournal;
  writer: ResultWriter;
  days: InstrumentDays;
  codes: InstrumentCodes;
}

/** Commits messages (alone or as a group) and reprocesses rejected captures; each call is one transaction. */
export class MessageCommits {
  private readonly ingestTx: Database.Transaction<
    (capture: Capture, rawSha256: string, valid: KeyedResult[], rejections: Rejection[], now: number) => IngestSummary
  >;
  private readonly groupTx: Database.Transaction<(messages: readonly InboundMessage[]) => (IngestSummary | Error)[]>;
  private readonly reprocessTx: Database.Transaction<
    (captureId: number, valid: KeyedResult[], rejections: Rejection[], actor: string, now: number) => IngestSummary
  >;

  constructor(
    private readonly db: Database.Database,
    private readonly parts: CommitParts,
    private readonly now: () => number,
    /** Steady time, for the due times of new outbox rows (steady-time.ts). */
    private readonly due: () => number = now,
  ) {
    this.ingestTx = db.transaction((capture, rawSha256, valid, rejections, at) => this.commitMessage(capture, rawSha256, valid, rejections, at));
    this.groupTx = db.transaction((messages) => messages.map((message) => this.ingestSaved(message)));
    this.reprocessTx = db.transaction((captureId, valid, rejections, actor, at) => this.commitReprocess(captureId, valid, rejections, actor, at));
  }

  /** One message in its own transaction; throws when SQLite cannot commit, and then nothing of it is stored. */
  ingest(message: InboundMessage): IngestSummary {
    const now = this.now();
    const { valid, invalid } = validateResults(message.results);
    const rejections = invalid.length > 0 ? [...message.rejections, ...invalid] : message.rejections;
    return this.ingestTx.immediate(message.capture, sha256Hex(message.capture.raw), valid, rejections, now);
  }

  /** Messages in one transaction without waiting for fsync, each in its own savepoint (see Store.ingestGroup). */
  ingestGroup(messages: readonly InboundMessage[]): (IngestSummary | Error)[] {
    const level = this.db.pragma('synchronous', { simple: true }) as number;
    this.db.pragma('synchronous = NORMAL');
    try {
      return this.groupTx.immediate(messages);
    } finally {
      this.db.pragma(`synchronous = ${level}`);
    }
  }

  /** A rejected capture decoded again, under the same rules, counting nothing twice. */
  reprocess(captureId: number, decoded: DecodedMessage, actor: string): IngestSummary {
    const now = this.now();
    const { valid, invalid } = validateResults(decoded.results);
    const rejections = [...decoded.rejections, ...invalid].map(({ observed: _, ...r }) => r);
    return this.reprocessTx.immediate(captureId, valid, rejections, actor, now);
  }

  // One message of a group, inside its savepoint (a db.transaction called within another is a SAVEPOINT). An error
  // that SQLite answered by rolling back the whole transaction ends the group: rethrown, or the next messages would
  // run outside any transaction. SQLite answers a full disk so (seen with max_page_count and on a full file system),
  // but its documentation lets it roll back only the statement: a full disk or an I/O error is rethrown either way,
  // as it is the disk's and not the message's. The whole group is refused and the analyzers send it again.
  private ingestSaved(message: InboundMessage): IngestSummary | Error {
    try {
      return this.ingest(message);
    } catch (err) {
      if (!this.db.inTransaction || diskError(err)) throw err;
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  private commitMessage(capture: Capture, rawSha256: string, valid: KeyedResult[], observed: Rejection[], now: number): IngestSummary {
    const { journal, writer, days, codes } = this.parts;
    codes.message(capture.instrumentId, capture.receivedAt, valid, observed);
    // What the analyzer sent beside a rejected code is for the codes seen; the reasons are kept as they always were.
    const rejections = observed.map(({ observed: _, ...r }) => r);
    const id = journal.insert(capture, rawSha256, rejections, valid.length, now);
    const from = { id, receivedAt: capture.receivedAt, rawSha256, ...(capture.clock ? { clock: capture.clock } : {}) };
    const ctx = { capture: from, now, due: this.due(), actor: GATEWAY_ACTOR, counted: null };
    const { tally, keys } = writer.writeAll(valid, ctx);
    this.auditRejections(id, rejections, GATEWAY_ACTOR, now);
    days.message(capture.instrumentId, capture.receivedAt, tally.inserted, rejections.length);
    // Only a rejected capture can be reprocessed, so only it needs to remember what it was counted for.
    if (rejections.length > 0) journal.settle(id, rejections, valid.length, keys, now);
    return { captureId: id, ...tally, rejected: rejections.length };
  }

  private commitReprocess(captureId: number, valid: KeyedResult[], rejections: Rejection[], actor: string, now: number): IngestSummary {
    const { journal, writer, days } = this.parts;
    const capture = journal.find(captureId);
    if (capture === undefined) throw new LabgateError('USAGE', `there is no capture ${captureId}`);
    if (capture.status !== 'rejected') {
      throw new LabgateError('USAGE', `capture ${captureId} was accepted; nothing to reprocess`);
    }
    const from = { id: captureId, receivedAt: capture.receivedAt, rawSha256: capture.rawSha256 };
    const counted = new Set(capture.countedKeys);
    const { tally, keys } = writer.writeAll(valid, { capture: from, now, due: this.due(), actor, counted });
    this.auditRejections(captureId, rejections, actor, now);
    journal.settle(captureId, rejections, valid.length, [...capture.countedKeys, ...keys], now);
    days.reprocessed(capture.instrumentId, capture.receivedAt, tally.inserted);
    const summary = { captureId, ...tally, rejected: rejections.length };
    writer.audit(now, actor, 'reprocessed', `capture:${captureId}`, JSON.stringify(summary));
    return summary;
  }

  private auditRejections(captureId: number, rejections: readonly Rejection[], actor: string, now: number): void {
    for (const rejection of rejections) {
      this.parts.writer.audit(now, actor, 'rejected', `capture:${captureId}`, JSON.stringify(rejection));
    }
  }
}

// SQLite's codes for a disk that cannot take more (SQLITE_FULL) or cannot be written (SQLITE_IOERR_*).
function diskError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'));
}
