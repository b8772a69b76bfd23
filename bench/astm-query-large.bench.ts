// One host query naming 10,000 specimens against `labgate run` as a real child process, the LIMS test server in its
// own process answering each orders lookup after 20 ms, while a second instrument keeps sending messages. Two
// querying instruments: one with the default bound (100 specimens per query, the rest refused) and one configured to
// the largest bound (10,000: every specimen asked, 4 lookups at a time, as many as the budget allows). Figures: each
// answer's time from the query's EOT (its ENQ, and its last frame ACKed) beside the analyzer's 10 s deadline, the
// other instrument's ACK latency beside the 100 ms ceiling, and the gateway's peak RSS beside its 150 MB ceiling.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AstmEmulator } from '../drivers/astm/emulator.js';
import { QueryingAnalyzer, type QueryOutcome } from '../drivers/astm/emulator-query.js';
import { AnalyzerReceiver } from '../drivers/astm/emulator-receiver.js';
import { systemClock } from '../src/clock.js';
import { SocketTransport } from '../src/transport/tcp.js';
import { Analyzer } from './astm-babble.bench.js';
import { startLimsChild } from './lims-child.js';
import { sig, type BenchLine } from './line.js';
import { freePort, procMb, startGateway, stopGateway } from './runtime.bench.js';

const SPECIMENS = 10_000;
const LIMS_LATENCY_MS = 20;
const DEADLINE_MS = 10_000;
const RSS_CEILING_MB = 150;
const ACK_CEILING_MS = 100;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['astm.query.large'];

/** Runs both queries and emits `astm.query.large`. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-query-large-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const accessions = Array.from({ length: SPECIMENS }, (_, i) => `Q${String(i).padStart(5, '0')}`);
    const orders = accessions.map((accession, i) => ({ accession, orders: [{ orderId: `o${i}`, loinc: '2823-3', orderedAt: '2026-07-01T08:00:00Z' }] }));
    const lims = await startLimsChild({ staticTokens: ['bench'], faults: { latencyMs: LIMS_LATENCY_MS } });
    cleanups.push(() => lims.stop());
    await lims.loadOrders(orders);
    const token = join(dir, 'lims-token');
    writeFileSync(token, 'bench\n');
    const [boundedPort, widestPort, otherPort] = [await freePort(), await freePort(), await freePort()];
    const instrument = (id: string, port: number, options = ''): string =>
      `  - {id: ${id}, driver: astm, timezone: UTC, transport: {kind: tcp-server, host: 127.0.0.1, port: ${port}}, mapping: [{code: K, loinc: 2823-3, unit: mmol/L}]${options}}`;
    const querying = (max: number): string => `, options: {orders: {query: true, queryTimeoutMs: ${DEADLINE_MS}, maxSpecimensPerQuery: ${max}}}`;
    const yaml = `instruments:\n${instrument('q-default', boundedPort, querying(100))}\n${instrument('q-widest', widestPort, querying(SPECIMENS))}\n${instrument('chem', otherPort)}\n`;
    const sinks = `sinks:\n  lims: {baseUrl: "${lims.url}", auth: {kind: static, tokenFile: ${JSON.stringify(token)}}}\n`;
    const gw = await startGateway(dir, 'query-large', yaml, sinks, cleanups);
    const pid = gw.child.pid!;
    const other = await Analyzer.open(otherPort);
    cleanups.push(() => other.close());
    const quiet = await other.sessions(() => false, 20);
    const idleMb = procMb(pid, 'VmRSS');
    let peakMb = idleMb;
    const sampler = setInterval(() => (peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'))), 50);
    cleanups.push(() => clearInterval(sampler));
    const cases = [];
    for (const [name, port] of [
      ['default', boundedPort],
      ['widest', widestPort],
    ] as const) {
      const before = (await lims.stats()).orderLookups;
      const peakBefore = peakMb;
      peakMb = procMb(pid, 'VmRSS');
      let asking = true;
      // The other instrument keeps sending until 2 s after the answer: what its delivery records and dispatches is seen too.
      const asked = ask(port, accessions).finally(() => setTimeout(() => (asking = false), 2_000));
      const [outcome, during] = await Promise.all([asked, other.sessions(() => asking)]);
      const casePeakMb = Math.max(peakMb, procMb(pid, 'VmRSS'));
      peakMb = Math.max(peakBefore, casePeakMb);
      cases.push({
        name,
        ...summary(outcome),
        limsLookups: (await lims.stats()).orderLookups - before,
        otherEnqAckMs: during.enq,
        otherCommitAckMs: during.commit,
        peakRssMb: sig(casePeakMb),
      });
    }
    clearInterval(sampler);
    peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'));
    other.close();
    await stopGateway(gw.child);
    const shipped = cases[0]!;
    emit({
      bench: 'astm.query.large',
      value: shipped.completeAfterMs ?? -1,
      unit: 'ms from the query EOT to the answer ACKed (default bound)',
      deadlineMs: DEADLINE_MS,
      allInTime: cases.every((c) => c.completeAfterMs !== null && c.completeAfterMs <= DEADLINE_MS),
      specimensNamed: SPECIMENS,
      limsLatencyMs: LIMS_LATENCY_MS,
      cases,
      otherAckP99Ms: Math.max(...cases.flatMap((c) => [c.otherEnqAckMs.p99, c.otherCommitAckMs.p99])),
      ackCeilingMs: ACK_CEILING_MS,
      quietEnqAckMs: quiet.enq,
      quietCommitAckMs: quiet.commit,
      peakRssMb: sig(peakMb),
      idleRssMb: sig(idleMb),
      rssCeilingMb: RSS_CEILING_MB,
    });
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

/**
 * The emulated analyzer asking for all `accessions` in one Q record over its own TCP connection. It waits three times
 * its deadline, so an answer that comes late is measured rather than called missed.
 */
async function ask(port: number, accessions: readonly string[]): Promise<QueryOutcome> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const transport = new SocketTransport(socket);
  try {
    const analyzer = new QueryingAnalyzer(new AstmEmulator(transport, systemClock), new AnalyzerReceiver(transport, systemClock), systemClock);
    return await analyzer.query(accessions, 3 * DEADLINE_MS);
  } finally {
    await transport.close();
  }
}

function summary(outcome: QueryOutcome) {
  if (outcome.kind !== 'answered')
    return { answered: false, outcome: outcome.kind, enqAfterMs: null, completeAfterMs: null, inTime: false, specimensAnswered: 0 };
  return {
    answered: true,
    enqAfterMs: sig(outcome.enqAfterMs),
    completeAfterMs: sig(outcome.completeAfterMs),
    inTime: outcome.completeAfterMs <= DEADLINE_MS,
    specimensAnswered: outcome.orders.size,
  };
}
