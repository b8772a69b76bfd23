// From the store's group commit (store/group-commit.ts) to the drivers' typed IngestPort.
// ARCHITECTURE.md invariant 1: `committed` is answered only after the transaction that holds the message (alone or
// with the messages that completed during the previous commit) is durable; anything else makes the driver refuse
// the message (NAK / AR) so the analyzer keeps it.
import { commitCost } from '../disk-guard.js';
import type { IngestSummary } from '../message.js';
import type { IngestPort } from '../runner-contract.js';
import { GroupCommit } from '../store/group-commit.js';
import type { Store } from '../store/store.js';

export interface IngestPortOptions {
  store: Store;
  /** False while the disk guard or a shutdown refuses new messages. */
  accepting: () => boolean;
  /** Called after a commit that created outbox rows (wakes the drains). */
  onCommitted: () => void;
  /** Charges a message's commit against the disk guard's estimate of free space, just before the commit. */
  chargeDisk?: (bytes: number) => void;
  /** Called after every committed message with its raw size (retention's budget of rejected captures). */
  onJournaled?: (rawBytes: number, summary: IngestSummary) => void;
  log: { error(obj: object, msg?: string): void };
  /** Test-only fault hook, run synchronously just before the commit (the kill-between-receipt-and-commit tests). */
  beforeCommit?: () => void;
  /** The committer; default one of its own on `store`. */
  group?: GroupCommit;
  /** True while the wall clock is known not to be synchronised: the receive time is then marked unreliable. */
  clockUnsynchronised?: () => boolean;
}

/** Builds the one IngestPort every driver runner commits through: one group commit shared by every instrument. */
export function createIngestPort(options: IngestPortOptions): IngestPort {
  const group = options.group ?? new GroupCommit(options.store);
  return async (message) => {
    if (!options.accepting()) return { kind: 'unavailable', reason: 'the gateway is not accepting messages now' };
    options.chargeDisk?.(commitCost(message.capture.raw.length, message.results.length));
    options.beforeCommit?.();
    const marked = options.clockUnsynchronised?.() ? { ...message, capture: { ...message.capture, clock: 'unsynchronised' as const } } : message;
    const outcome = await group.commit(marked);
    if (outcome.kind === 'committed') {
      options.onJournaled?.(message.capture.raw.length, outcome.summary);
      if (outcome.summary.inserted > 0) options.onCommitted();
      return { kind: 'committed', summary: outcome.summary, rejections: message.rejections };
    }
    const reason = describeStoreError(outcome.error);
    options.log.error({ instrument: message.capture.instrumentId, reason }, 'commit failed; the analyzer keeps the message');
    return { kind: 'unavailable', reason };
  };
}

/** A store failure in words a technician can act on (SQLite codes, never message content). */
export function describeStoreError(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === 'SQLITE_FULL') return 'the disk is full';
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) return `disk I/O error (${code})`;
  if (typeof code === 'string') return `store error ${code}`;
  return `store error: ${(err as Error | undefined)?.message ?? String(err)}`;
}
