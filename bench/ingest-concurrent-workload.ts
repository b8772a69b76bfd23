// The ingest.concurrent workload: 16 instruments, each sending 20-result messages back to back and waiting for each
// one's answer before the next, as an analyzer waits for its ACK, all through the gateway's one IngestPort.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createIngestPort } from '../src/gateway/ingest-port.js';
import type { InboundMessage } from '../src/message.js';
import { GroupCommit } from '../src/store/group-commit.js';
import type { Store } from '../src/store/store.js';
import { benchMessage } from './ingest.bench.js';

export const INSTRUMENTS = 16;
export const PER_MESSAGE = 20;

/**
 * How the port commits: `group` is labgate's group commit (synchronous=FULL, one WAL fsync per group, off the event
 * loop); `per-message` one synchronous=FULL commit per message on the event loop (grouping off: what labgate did
 * before); `no-fsync` one commit per message with synchronous=OFF and no fsync at all (the peer: this CPU's ingest).
 */
export type CommitMode = 'group' | 'per-message' | 'no-fsync';

/** What one run measured. */
export interface WorkloadFigures {
  results: number;
  ms: number;
  messagesPerCommit: number;
  messagesPerFsync: number;
  ackP99Ms: number;
  eventLoopDelayP99Ms: number;
}

/** The committer of `mode` on `store`. */
export function committer(store: Store, mode: CommitMode): GroupCommit {
  if (mode === 'group') return new GroupCommit(store);
  if (mode === 'no-fsync') store.db.pragma('synchronous = OFF');
  // Through the same committer, so the peers differ only in how a message is made to stay.
  const oneByOne = (messages: readonly InboundMessage[]) => messages.map((m) => store.ingest(m));
  return new GroupCommit({ ingestGroup: oneByOne, syncWal: async () => {}, lastResultId: () => 0, holdAfter: () => {} });
}

/** Runs `messagesEach` messages per instrument from message number `first` on; throws if one is not committed. */
export async function runWorkload(store: Store, group: GroupCommit, first: number, messagesEach: number): Promise<WorkloadFigures> {
  const port = createIngestPort({ store, group, accepting: () => true, onCommitted: () => {}, log: { error: () => {} } });
  const latencies: number[] = [];
  const before = group.figures();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const instrument = async (k: number): Promise<void> => {
    for (let seq = 0; seq < messagesEach; seq++) {
      // The analyzer's next message comes in from the line after our ACK went out: a later turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      const message = benchMessage(first + seq * INSTRUMENTS + k);
      const sent = performance.now();
      const outcome = await port(message);
      latencies.push(performance.now() - sent);
      if (outcome.kind !== 'committed') throw new Error(`message not committed: ${outcome.reason}`);
    }
  };
  delay.enable();
  const start = performance.now();
  await Promise.all(Array.from({ length: INSTRUMENTS }, (_, k) => instrument(k)));
  const ms = performance.now() - start;
  delay.disable();
  const after = group.figures();
  latencies.sort((a, b) => a - b);
  return {
    results: INSTRUMENTS * messagesEach * PER_MESSAGE,
    ms,
    messagesPerCommit: (after.messages - before.messages) / Math.max(1, after.commits - before.commits),
    messagesPerFsync: (after.messages - before.messages) / Math.max(1, after.fsyncs - before.fsyncs),
    ackP99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
    eventLoopDelayP99Ms: delay.percentile(99) / 1e6,
  };
}
