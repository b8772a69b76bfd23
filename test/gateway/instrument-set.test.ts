// A reload's instrument changes: the removed and restarted instruments stop (their sessions first, then their ports)
// under the configuration they ran with, then the new configuration becomes the running one, then the restarted and
// added ones start; an instrument the plan does not name is never touched, and the page keeps the file's order.
import { describe, expect, it } from 'vitest';
import type { InstrumentConfig } from '../../src/config/schema.js';
import { InstrumentSet } from '../../src/gateway/instrument-set.js';
import type { InstrumentHandle } from '../../src/gateway/instruments.js';
import type { LogSummary } from '../../src/log-summary.js';
import type { PortStatus } from '../../src/transport/supervisor.js';

const entry = (id: string, path = `/dev/${id}`): InstrumentConfig => ({ id, enabled: true, transport: { path } }) as unknown as InstrumentConfig;

function rig(initial: InstrumentConfig[]) {
  const trace: string[] = [];
  let configured = initial;
  const make = (instrument: InstrumentConfig): InstrumentHandle => {
    const at = (instrument.transport as { path: string }).path;
    return {
      id: instrument.id,
      supervisor: {
        start: () => void trace.push(`start ${instrument.id} ${at}`),
        stop: async () => {
          await Promise.resolve();
          trace.push(`stop session ${instrument.id}`);
        },
        snapshot: () => ({ instrument: instrument.id }) as PortStatus,
      },
      endpoint: { close: async () => void trace.push(`close port ${instrument.id}`) },
      log: { flush: () => {} } as LogSummary,
    };
  };
  const set = new InstrumentSet(() => configured, make);
  set.start();
  trace.length = 0;
  return { set, trace, configure: (next: InstrumentConfig[]) => (configured = next) };
}

describe('InstrumentSet.apply', () => {
  it('stops the removed and restarted ones, swaps the configuration, then starts the restarted and added ones', async () => {
    const { set, trace, configure } = rig([entry('a'), entry('b'), entry('c')]);
    const next = [entry('a'), entry('b', '/dev/b2'), entry('d')];
    await set.apply({ removed: ['c'], restarted: [{ instrument: next[1]!, why: ['transport'] }], added: [next[2]!] }, () => {
      trace.push('swap');
      configure(next);
    });
    expect(trace.slice(0, 4).sort()).toEqual(['close port b', 'close port c', 'stop session b', 'stop session c']);
    expect(trace.indexOf('stop session c')).toBeLessThan(trace.indexOf('close port c'));
    expect(trace.slice(4)).toEqual(['swap', 'start b /dev/b2', 'start d /dev/d']);
    expect(trace.join()).not.toContain(' a');
    expect(set.handles().map((h) => h.id)).toEqual(['a', 'b', 'd']);
  });
});
