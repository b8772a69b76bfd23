// Host query latency: from the analyzer's EOT after its query to labgate's ENQ that opens the answer, with the LIMS
// test server (its own process) answering each orders lookup after 20 ms. The real runner, line, order desk, orders
// client and store; the analyzer is the project's emulator on an in-memory cable. Target: p99 ≤ LIMS latency + 30 ms.
import { AstmEmulator } from '../drivers/astm/emulator.js';
import { QueryingAnalyzer } from '../drivers/astm/emulator-query.js';
import { AnalyzerReceiver } from '../drivers/astm/emulator-receiver.js';
import { parseAstmOptions } from '../drivers/astm/options.js';
import { createAstmRunner } from '../drivers/astm/runner.js';
import { systemClock } from '../src/clock.js';
import { silentLog } from '../src/log.js';
import { sig, type BenchLine } from './line.js';
import { cable, quantile, startQueryRig } from './query-fixture.js';

const LIMS_LATENCY_MS = 20;
const WARMUP = 20;
const QUERIES = 300;
const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'NA', loinc: '2951-2' },
  { code: 'K', loinc: '2823-3' },
];

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['astm.query.latency'];

/** Emits astm.query.latency: p50 and p99 beside the LIMS's own latency and the target ceiling. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const accessions = Array.from({ length: WARMUP + QUERIES }, (_, i) => `B${String(i).padStart(5, '0')}`);
  const orders = accessions.map((accession, i) => ({
    accession,
    orders: [{ orderId: `o${i}`, loinc: mapping[i % 3]!.loinc, orderedAt: '2026-07-01T08:00:00Z' }],
  }));
  const rig = await startQueryRig(orders, LIMS_LATENCY_MS);
  const { analyzer, gateway } = cable();
  const profile = { id: 'bench-q', gatewayId: 'gw-bench', timezone: 'UTC', mapping };
  const runner = createAstmRunner(
    {
      profile,
      transport: gateway,
      ingest: rig.ingest,
      accepting: () => true,
      clock: systemClock,
      log: silentLog,
      onEvent: () => {},
      orders: { source: rig.client, ledger: rig.store.orders },
    },
    parseAstmOptions({ orders: { query: true } }),
  );
  runner.start();
  const querying = new QueryingAnalyzer(new AstmEmulator(analyzer, systemClock), new AnalyzerReceiver(analyzer, systemClock), systemClock);
  const latencies: number[] = [];
  try {
    for (const [i, accession] of accessions.entries()) {
      const outcome = await querying.query([accession], 10_000);
      if (outcome.kind !== 'answered' || outcome.orders.get(accession)?.length !== 1) throw new Error(`query ${accession}: ${outcome.kind}`);
      if (i >= WARMUP) latencies.push(outcome.enqAfterMs);
    }
  } finally {
    await runner.stop();
    await rig.close();
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = quantile(sorted, 0.99);
  emit({
    bench: 'astm.query.latency',
    value: sig(p99),
    unit: 'ms',
    p50Ms: sig(quantile(sorted, 0.5)),
    p99Ms: sig(p99),
    limsLatencyMs: LIMS_LATENCY_MS,
    targetP99Ms: LIMS_LATENCY_MS + 30,
    ratioToTarget: sig(p99 / (LIMS_LATENCY_MS + 30)),
    queries: QUERIES,
  });
}
