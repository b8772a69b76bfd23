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
// - Nothing of a group is offered to a sink before its fsync has returned (the outbox holds its ids out of claims):
//   a power cut could otherwise take back from the gateway a result a sink already holds.
// - One fsync at a time: while it runs, completing messages queue; the next group is everything queued. A lone
//   message is committed in the same tick it completes: nothing ever waits on a timer to be grouped.
// - A message that fails its own statements is rolled back to its savepoint and refused alone; a failure of the
//   transaction or of the fsync refuses the whole group (the analyzers keep their messages and send them again; a
//   group that did reach the disk is then absorbed as a replay, invariant 4).
// - Why not a commit that blocks on fsync: better-sqlite3 is synchronous, so a synchronous=FULL commit holds the
//   event loop (drains, the HTTP server, every other instrument's link layer) for the whole fsync, milliseconds on
//   an SD card, and no other instrument's message can even complete meanwhile.
import type { InboundMessage, IngestSummary } from '../message.js';
import type { Store } from './store.js';

/** What became of one message: committed durably, or refused with the error (its own or its group's). */
export type GroupOutcome = { kind: 'committed'; summary: IngestSummary } | { kind: 'failed'; error: unknown };

/** Commits and fsyncs performed, for the bench and the status figures. */
export interface GroupFigures {
  commits: number;
  messages: number;
}

interface Waiting {
  message: InboundMessage;
  answer: (outcome: GroupOutcome) => void;
}

/** The one committer of a store's incoming messages. */
export class GroupCommit {
  private queue: Waiting[] = [];
  private running = false;
  private readonly counted: GroupFigures = { commits: 0, messages: 0 };

  /** `sync` is the fsync that makes a committed group durable (the store's WAL; a bench may measure without it). */
  constructor(
    private readonly store: Pick<Store, 'ingestGroup' | 'syncWal'>,
    private readonly sync: () => Promise<void> = () => store.syncWal(),
  ) {}

  /** Resolves once `message` is durable (alone or in a group), or failed; it never rejects. */
  commit(message: InboundMessage): Promise<GroupOutcome> {
    return new Promise((answer) => {
      this.queue.push({ message, answer });
      // The messages completing in this same tick (several analyzers' data read together) join the first.
      if (!this.running) {
        this.running = true;
        queueMicrotask(() => void this.drain());
      }
    });
  }

  /** How many commits have been made durable and the messages they held. */
  figures(): GroupFigures {
    return { ...this.counted };
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      const outcomes = await this.durable(group.map((w) => w.message));
      group.forEach((w, i) => w.answer(outcomes[i]!));
    }
    this.running = false;
  }

  private async durable(messages: InboundMessage[]): Promise<GroupOutcome[]> {
    let results: (IngestSummary | Error)[];
    try {
      results = this.store.ingestGroup(messages);
      await this.sync();
    } catch (error) {
      return messages.map(() => ({ kind: 'failed', error }));
    }
    this.counted.commits++;
    this.counted.messages += messages.length;
    return results.map((r) => (r instanceof Error ? { kind: 'failed', error: r } : { kind: 'committed', summary: r }));
  }
}
