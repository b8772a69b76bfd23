// A DriverContext for runner tests: the real FakeTransport, an in-memory IngestPort that keeps every
// message and deduplicates results by key (as the store does), a manual clock and a recording log.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { Clock, DriverContext, DriverEvent, IngestOutcome } from '../../src/driver.js';
import type { InboundMessage } from '../../src/message.js';
import { dedupKey } from '../../src/result.js';
import { FakeTransport } from '../../src/transport/fake.js';

/** A clock tests advance by hand. */
export class ManualClock implements Clock {
  private timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;
  constructor(public time = Date.UTC(2024, 9, 29, 12, 0, 0)) {}
  now(): number {
    return this.time;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = due[1].at;
      due[1].callback();
    }
    this.time = until;
  }
  get pending(): number {
    return this.timers.size;
  }
}

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
    const summary = { captureId: this.messages.length, inserted, absorbed: message.results.length - inserted, conflicts: 0, rejected: message.rejections.length };
    return { kind: 'committed', summary, rejections: message.rejections };
  };
}

/** Everything a runner test needs, wired together. */
export function makeContext(profile: InstrumentProfile) {
  const timeline: string[] = [];
  const transport = new FakeTransport();
  transport.onWrite(() => timeline.push('write'));
  const ingest = new MemoryIngest(timeline);
  const clock = new ManualClock();
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
    log: { info: record('info'), warn: record('warn'), error: record('error'), debug: record('debug') },
    onEvent: (e) => events.push(e),
  };
  return { ctx, transport, ingest, clock, events, logs, timeline, setAccepting: (v: boolean) => (accepting = v) };
}

/** Lets queued writes (promise chains) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise((r) => setImmediate(r));
}
