// An instrument's listening port without an allow-list takes a session from anyone on the laboratory network: a
// stranger can hold it while the analyzer's own connection waits (until 30 s of silence, docs/lab-network.md).
// That is allowed (an installer may not know the analyzer's address yet), so check-config warns instead of refusing.
import type { ConfigProblem } from './problem.js';
import type { InstrumentConfig } from './schema.js';

/** A warning for each enabled instrument listening on TCP with no `transport.allow`. */
export function openPortWarnings(instruments: readonly InstrumentConfig[]): ConfigProblem[] {
  return instruments.flatMap((instrument, i) => {
    const t = instrument.transport;
    if (!instrument.enabled || t.kind !== 'tcp-server' || t.allow !== undefined) return [];
    return [
      {
        path: `instruments[${i}].transport.allow`,
        message: `not set: anyone on the network can connect to port ${t.port} and hold it while ${instrument.id} waits; list the analyzer's address (or its terminal server's)`,
      },
    ];
  });
}
