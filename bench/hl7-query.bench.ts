// HL7 host query latency: from the analyzer's query (QRY^Q02, or QBP^Q11) to the first byte of labgate's answer
// (QCK^Q02, or RSP^K11), with the LIMS test server (its own process) answering each orders lookup after 20 ms. The real
// runner, order desk, courier, orders client and store; the analyzer is the project's HL7 emulator on an in-memory
// cable, half the queries in each dialect. Target: p99 ≤ LIMS latency + 30 ms.
import { Hl7QueryingAnalyzer, type EmulatedDialect } from '../drivers/hl7/emulator-query.js';
import { hl7Options } from '../drivers/hl7/options.js';
import { createHl7Runner } from '../drivers/hl7/runner.js';
import { systemClock } from '../src/clock.js';
import { silentLog } from '../src/log.js';
import { sig, type BenchLine } from './line.js';
import { cable, quantile, startQueryRig, type QueryRig } from './query-fixture.js';

const LIMS_LATENCY_MS = 20;
const WARMUP = 10;
const QUERIES = 150;
const mapping = [
  { code: 'GLU', loinc: '2345-7' },
  { code: 'NA', loinc: '2951-2' },
  { code: 'K', loinc: '2823-3' },
];

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['hl7.query.latency'];

/** Emits hl7.query.latency: p50 and p99 over both dialects (and each one's p99) beside the LIMS's latency and the target. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const accessions = (dialect: string) => Array.from({ length: WARMUP + QUERIES }, (_, i) => `${dialect[0]!.toUpperCase()}${String(i).padStart(5, '0')}`);
  const all = [...accessions('display-query'), ...accessions('law')];
  const orders = all.map((accession, i) => ({
    accession,
    orders: [{ orderId: `o${i}`, loinc: mapping[i % 3]!.loinc, orderedAt: '2026-07-01T08:00:00Z' }],
  }));
  const rig = await startQueryRig(orders, LIMS_LATENCY_MS);
  const byDialect = new Map<EmulatedDialect, number[]>();
  try {
    for (const dialect of ['display-query', 'law'] as const) byDialect.set(dialect, await measure(dialect, accessions(dialect), rig));
  } finally {
    await rig.close();
  }
  const sorted = [...byDialect.values()].flat().sort((a, b) => a - b);
  const p99 = quantile(sorted, 0.99);
  const p99Of = (d: EmulatedDialect): number =>
    sig(
      quantile(
        [...byDialect.get(d)!].sort((a, b) => a - b),
        0.99,
      ),
    );
  emit({
    bench: 'hl7.query.latency',
    value: sig(p99),
    unit: 'ms',
    p50Ms: sig(quantile(sorted, 0.5)),
    p99Ms: sig(p99),
    displayQueryP99Ms: p99Of('display-query'),
    lawP99Ms: p99Of('law'),
    limsLatencyMs: LIMS_LATENCY_MS,
    targetP99Ms: LIMS_LATENCY_MS + 30,
    ratioToTarget: sig(p99 / (LIMS_LATENCY_MS + 30)),
    queries: sorted.length,
  });
}

/** One runner in `dialect`, its analyzer asking for each accession in turn; the latencies after the warm-up. */
async function measure(dialect: EmulatedDialect, accessions: readonly string[], rig: QueryRig): Promise<number[]> {
  const { analyzer, gateway } = cable();
  const runner = createHl7Runner(
    {
      profile: { id: `bench-${dialect}`, gatewayId: 'gw-bench', timezone: 'UTC', mapping },
      transport: gateway,
      ingest: rig.ingest,
      accepting: () => true,
      clock: systemClock,
      log: silentLog,
      onEvent: () => {},
      orders: { source: rig.client, ledger: rig.store.orders },
    },
    hl7Options({ orders: { query: true, dialect } }),
  );
  runner.start();
  const querying = new Hl7QueryingAnalyzer({ write: (d) => analyzer.write(d), onData: (l) => analyzer.onData(l) }, dialect);
  const latencies: number[] = [];
  try {
    for (const [i, accession] of accessions.entries()) {
      const outcome = await querying.query(accession, 10_000);
      if (outcome.kind !== 'answered' || outcome.codes.length !== 1) throw new Error(`query ${accession}: ${outcome.kind}`);
      if (i >= WARMUP) latencies.push(outcome.firstByteAfterMs);
    }
  } finally {
    await runner.stop();
  }
  return latencies;
}
