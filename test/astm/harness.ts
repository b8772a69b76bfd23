// A runner on a fake transport with a recording ingest port: what the runtime gives a driver, in memory.
import type { DriverEvent, IngestOutcome, IngestPort } from '../../src/runner-contract.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { InboundMessage } from '../../src/message.js';
import { FakeTransport } from '../../src/transport/fake.js';
import { createAstmRunner } from '../../drivers/astm/runner.js';
import type { AstmOptions } from '../../drivers/astm/options.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { silentLog } from '../../src/log.js';

/** Records the order of ingests and writes, so durable-before-ACK can be asserted. */
export interface Harness {
  transport: FakeTransport;
  clock: ManualClock;
  messages: InboundMessage[];
  events: DriverEvent[];
  /** 'ingest' and 'write <byte>' entries in the order they happened. */
  trace: string[];
  setAccepting(v: boolean): void;
  setIngest(fn: IngestPort): void;
  stop(): Promise<void>;
}

const summary = { captureId: 1, inserted: 0, absorbed: 0, conflicts: 0, rejected: 0 };
const silent = silentLog;

/** Starts an ASTM runner over a FakeTransport whose ingest always commits unless told otherwise. */
export function harness(profile: InstrumentProfile, options: AstmOptions, transport = new FakeTransport()): Harness {
  const clock = new ManualClock();
  const messages: InboundMessage[] = [];
  const events: DriverEvent[] = [];
  const trace: string[] = [];
  let accepting = true;
  let ingest: IngestPort = (m: InboundMessage): IngestOutcome => {
    messages.push(m);
    return { kind: 'committed', summary: { ...summary, inserted: m.results.length }, rejections: m.rejections };
  };
  transport.onWrite((d) => trace.push(`write ${[...d].join(',')}`));
  const runner = createAstmRunner(
    {
      profile,
      transport,
      clock,
      log: silent,
      accepting: () => accepting,
      ingest: (m) => {
        trace.push('ingest');
        return ingest(m);
      },
      onEvent: (e) => events.push(e),
    },
    options,
  );
  runner.start();
  return {
    transport,
    clock,
    messages,
    events,
    trace,
    setAccepting: (v) => (accepting = v),
    setIngest: (fn) => (ingest = fn),
    stop: () => runner.stop(),
  };
}
