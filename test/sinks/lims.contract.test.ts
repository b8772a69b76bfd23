// The sink contract against the LIMS sink and the LIMS test server, and against the demo's observed sink (the LIMS
// sink seen through the demo's window, which must keep every promise of the sink it wraps).
import { ObservedSink } from '../../src/demo/observed-sink.js';
import type { OutboxRow } from '../../src/delivery/contract.js';
import { rig } from '../lims/harness.js';
import { sinkContract, type SinkHarness } from './contract.js';

async function limsHarness(wrap: boolean): Promise<SinkHarness> {
  const r = await rig();
  const sink = wrap ? new ObservedSink(r.sink, () => {}) : r.sink;
  const document = (row: OutboxRow) => r.server.record(row.recordId)?.document as { result?: { value?: number | null } } | undefined;
  return {
    sink,
    name: 'lims',
    refuse: async (row) => r.server.configure({ reject422: [...r.server.faults().reject422, row.recordId] }),
    held: async (row) => ({ count: r.server.record(row.recordId) ? 1 : 0, value: document(row)?.result?.value ?? null }),
    outage: async (down) => r.server.configure({ outage: down }),
    close: () => r.close(),
  };
}

sinkContract('LIMS', () => limsHarness(false));
sinkContract("the demo's observed sink (over the LIMS sink)", () => limsHarness(true));
