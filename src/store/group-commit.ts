// Group commit: the messages of every instrument that complete while one commit is being made durable are committed
// together in the next transaction, each in its own savepoint, and made durable by one fsync.
//
// Durability rules (ARCHITECTURE.md invariant 1: a message is acknowledged only after the commit that holds it,
// alone or with the messages that completed during the previous commit):
// - A group's transaction commits with synchronous=NORMAL (store.ingestGroup), then the WAL file is fsynced on
//   libuv's thread pool (store.syncWal); only when that fsync has returned is any message of the group answered.
//   In WAL mode, FULL differs from NORMAL only by that one fsync of the WAL after each commit (SQLite's PRAGMA
//   synchronous documentation), so NORMAL + our fsync is FULL, shared by the group and off the event loop. The
//   fsync flushes every byte SQLite wrote to the WAL before it began, on any descriptor (fsync is per file). A power
//   cut before it returns loses at most groups nobody was answered for; SQLite's NORMAL mode keeps the database
//   consistent (checkpoints and WAL restarts are synced), so a group is whole or absent.
// - Nothing of a group is offered to a sink before its fsync has returned (the store holds the results above the
//   last durable one out of the drains' claims): a power cut could otherwise take back from the gateway a result a
//   sink already holds.
// - A lone message is committed at the next turn of the event loop (setImmediate), joined by whatever else completed
//   in the same turn: nothing ever waits on a timer to be grouped. The messages queued meanwhile are committed at most `maxGroup` a transaction, one transaction per turn of the event
//   loop, so that the other instruments' link layers, the drains and the HTTP server run between transactions. A
//   transaction of 16 messages costs less than 16 of one (the pages they share are written once), and none of it
//   waits for the disk on the event loop (bench/ingest-concurrent: the loop's delay beside one commit per message).
// - One fsync at a time, covering every group committed before it began; groups keep being committed while it runs,
//   so the CPU's work and the disk's overlap, and a slow disk makes the fsyncs fewer, not the analyzers slower.
// - A message that fails its own statements is rolled back to its savepoint and refused alone; a failure of the
//   transaction or of the fsync, or a full disk or an I/O error in any message's statements, refuses the whole group
//   (the analyzers keep their messages and send them again; a group that did reach the disk is then absorbed as a
//   replay, invariant 4).
// - Why not a commit that blocks on fsync: better-sqlite3 is synchronous, so a synchronous=FULL commit holds the
//   event loop (drains, the HTTP server, every other instrument's link layer) for the whole fsync, milliseconds on
//   an SD card, and no other instrument's message can even complete meanwhile. Why not a writer thread with its own
//   connection: two writers on one database wait for each other in SQLite's busy handler, on the event loop too;
//   here the store keeps its one connection, and only the fsync (and the checkpoints, checkpointer.ts) leave it.
import type { InboundMessage, IngestSummary } from '../message.js';
import type { Store } from './store.js';

/** What became of one message: committed durably, or refused with the error (its own or its group's). */
export type GroupOutcome = { kind: 'committed'; summary: IngestSummary } | { kind: 'failed'; error: unknown };

/** Transactions and fsyncs made, and the messages they held, for the bench and the status figures. */
export interface GroupFigures {
  commits: number;
  fsyncs: number;
  messages: number;
}

/** The store's side of a group commit. */
export type GroupStore = Pick<Store, 'ingestGroup' | 'syncWal' | 'lastResultId' | 'holdAfter'>;

/** How a group commit runs; the defaults are the gateway's. */
export interface GroupOptions {
  /** The fsync that makes the committed groups durable: the store's WAL (a test may slow it down or fail it). */
  sync?: () => Promise<void>;
  /** At most this many messages in one transaction. Default 16, one per instrument a gateway serves. */
  maxGroup?: number;
}

interface Waiting {
  message: InboundMessage;
  answer: (outcome: GroupOutcome) => void;
}

interface Committed {
  group: Waiting[];
  results: (IngestSummary | Error)[];
  /** The last result id before the group: its results, and the later groups', are held from the drains. */
  after: number;
}

/** The one committer of a store's incoming messages. */
export class GroupCommit {
  private queue: Waiting[] = [];
  private unsynced: Committed[] = [];
  private committing = false;
  private syncing = false;
  private readonly counted: GroupFigures = { commits: 0, fsyncs: 0, messages: 0 };
  private readonly sync: () => Promise<void>;
  private readonly maxGroup: number;

  constructor(
    private readonly store: GroupStore,
    options: GroupOptions = {},
  ) {
    this.sync = options.sync ?? (() => store.syncWal());
    this.maxGroup = options.maxGroup ?? 16;
  }

  /** Resolves once `message` is durable (alone or in a group), or failed; it never rejects. */
  commit(message: InboundMessage): Promise<GroupOutcome> {
    return new Promise((answer) => {
      this.queue.push({ message, answer });
      // The messages completing in this same turn of the event loop (several analyzers' data read together) join
      // the first: a turn, not a timer, so a lone message is committed as soon as the loop is free.
      if (!this.committing) {
        this.committing = true;
        setImmediate(() => this.commitNext());
      }
    });
  }

  /** Transactions and fsyncs made so far, and the messages committed. */
  figures(): GroupFigures {
    return { ...this.counted };
  }

  private commitNext(): void {
    const group = this.queue.splice(0, this.maxGroup);
    try {
      const after = this.store.lastResultId();
      const results = this.store.ingestGroup(group.map((w) => w.message));
      if (this.unsynced.length === 0 && !this.syncing) this.store.holdAfter(after);
      this.unsynced.push({ group, results, after });
      this.counted.commits++;
      this.counted.messages += group.length;
      this.syncNext();
    } catch (error) {
      for (const w of group) w.answer({ kind: 'failed', error });
    }
    if (this.queue.length > 0) setImmediate(() => this.commitNext());
    else this.committing = false;
  }

  private syncNext(): void {
    if (this.syncing || this.unsynced.length === 0) return;
    this.syncing = true;
    const covered = this.unsynced;
    this.unsynced = [];
    const answer = (outcome: (result: IngestSummary | Error) => GroupOutcome): void => {
      this.syncing = false;
      // The groups committed during this fsync stay held until the next one has returned.
      this.store.holdAfter(this.unsynced[0]?.after ?? null);
      for (const { group, results } of covered) group.forEach((w, i) => w.answer(outcome(results[i]!)));
      this.syncNext();
    };
    this.sync().then(
      () => {
        this.counted.fsyncs++;
        answer((r) => (r instanceof Error ? { kind: 'failed', error: r } : { kind: 'committed', summary: r }));
      },
      (error: unknown) => answer(() => ({ kind: 'failed', error })),
    );
  }
}
