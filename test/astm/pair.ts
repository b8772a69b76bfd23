// Two fake transports wired back to back: what one writes, the other receives.
import { FakeTransport } from '../../src/transport/fake.js';

/** An analyzer end and a labgate end of one cable. */
export function transportPair(): { analyzer: FakeTransport; gateway: FakeTransport } {
  const analyzer = new FakeTransport();
  const gateway = new FakeTransport();
  analyzer.onWrite((d) => gateway.emitData(d));
  gateway.onWrite((d) => analyzer.emitData(d));
  return { analyzer, gateway };
}
