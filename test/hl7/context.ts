// A DriverContext for runner tests: the real FakeTransport, an in-memory IngestPort that keeps every
// message and deduplicates results by key (as the store does), a manual clock and a recording log.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DriverContext, DriverEvent, IngestOutcome } from '../../src/runner-contract.js';
import type { InboundMessage } from '../../src/message.js';
import { dedupKey } from '../../src/result.js';
import { FakeTransport } from '../../src/transport/fake.js';
import { ManualClock } from '../fixtures/manual-clock.js';

export { ManualClock, settle } from '../fixtures/manual-clock.js';

/** An IngestPort over memory; `mode` decides what the next commit does. */
export class MemoryIngest {
  readonly messages: InboundMessage[] = [];
  readonly keys = new Set<string>();
  mode: 'ok' | 'unavailable' | 'throw' = 'ok';
  /** Shared timeline with the transport's writes, to prove the order "commit, then ACK". */
  constructor(readonly timeline: string[] = []) {}

  readonly port = (message: InboundMessage): IngestOutcome => {
    if (this.mode === 'throw') throw new Error('SQLITE_FULL: database or disk is full');
    if (this.mode === 'unavailable') return { kind: 'unavailable', reason: 'disk below floor' };
    this.messages.push(message);
    let inserted = 0;
    for (const r of message.results) {
      const key = dedupKey(r);
      if (!this.keys.has(key)) inserted += 1;
      this.keys.add(key);
    }
    this.timeline.push(`commit ${this.messages.length}`);
    const summary = {
      captureId: this.messages.length,
      inserted,
      absorbed: message.results.length - inserted,
      conflicts: 0,
      rejected: message.rejections.length,
    };
    return { kind: 'committed', summary, rejections: message.rejections };
  };
}

/** Everything a runner test needs, wired together. */
export function makeContext(profile: InstrumentProfile) {
  const timeline: string[] = [];
  const transport = new FakeTransport();
  transport.onWrite(() => timeline.push('write'));
  const ingest = new MemoryIngest(timeline);
  const clock = new ManualClock(Date.UTC(2024, 9, 29, 12, 0, 0));
  const events: DriverEvent[] = [];
  const logs: string[] = [];
  const record = (level: string) => (obj: object, msg?: string) => logs.push(`${level} ${msg ?? ''} ${JSON.stringify(obj)}`);
  let accepting = true;
  const ctx: DriverContext = {
    profile,
    transport,
    ingest: ingest.port,
    accepting: () => accepting,
    clock,
    log: { info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug'), fatal: record('fatal') },
    onEvent: (e) => events.push(e),
  };
  return { ctx, transport, ingest, clock, events, logs, timeline, setAccepting: (v: boolean) => (accepting = v) };
}
