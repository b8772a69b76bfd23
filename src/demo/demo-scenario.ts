// The demo's story, phase by phase: results flow (one frame corrupted on the wire), a LIMS outage (with --fhir the
// FHIR server's too), a crash of the gateway in the middle of a delivery and a restart on the same data directory,
// then a host query: the analyzer asks which tests two specimens need and runs exactly what the LIMS ordered.
// Each phase ends only when every sink holds every result sent so far; anything else is a failure with its reason.
import { systemClock } from '../clock.js';
import { seededRandom } from '../lims-server/faults.js';
import type { DriverEvent } from '../runner-contract.js';
import { crashGateway } from './crash-gateway.js';
import { hl7Dispatched, hl7Query } from './demo-hl7.js';
import { DemoAnalyzer } from './demo-analyzer.js';
import type { DemoEnvironment, DemoGateway } from './demo-environment.js';
import { DeliveryTally } from './delivery-tally.js';
import { makeSpecimens, type SentResult, type Specimen } from './specimens.js';

/** Where progress lines go. */
export type Say = (line: string) => void;

/** Timings of the faults (the test runs the same ones). */
const OUTAGE_MS = 3_000;
const SLOW_LIMS_MS = 250;
const PHASE_TIMEOUT_MS = 15_000;

/** What the summary checks against. */
export interface DemoRun {
  sent: SentResult[];
  stored: { inserted: number; rejected: number };
  gateway: DemoGateway;
  tally: DeliveryTally;
  /** The keys of the HL7 analyzer's results (step 5), when the demo has one. */
  hl7?: string[];
}

/** Runs the phases on an environment and leaves the restarted gateway running for the summary. */
export async function runScenario(env: DemoEnvironment, say: Say): Promise<DemoRun> {
  const instrument = env.instrument;
  const analyzer = new DemoAnalyzer(env.line, instrument.id);
  const tally = new DeliveryTally();
  const hl7Events: Extract<DriverEvent, { kind: 'message' }>[] = [];
  const onDriverEvent = (id: string, e: DriverEvent): void => {
    analyzer.onDriverEvent(id, e);
    if (id === env.hl7Instrument?.id && e.kind === 'message') hl7Events.push(e);
  };
  const listeners = { onOutcomes: tally.record, onDriverEvent };
  const random = seededRandom(2026);
  let next = 1;
  const specimens = (count: number, codes?: readonly string[], accessions?: readonly string[]): Specimen[] => {
    const made = makeSpecimens({
      first: next,
      count,
      at: systemClock.now(),
      instrumentId: instrument.id,
      zone: instrument.timezone,
      mapping: instrument.mapping,
      random,
      ...(codes ? { codes } : {}),
      ...(accessions ? { accessions } : {}),
    });
    next += count;
    return made;
  };
  const run: DemoRun = { sent: [], stored: { inserted: 0, rejected: 0 }, gateway: await env.openGateway(listeners), tally };
  say(`  status page   ${run.gateway.httpUrl}/   (health: ${run.gateway.httpUrl}/healthz)`);
  await waitFor(() => env.line.open, PHASE_TIMEOUT_MS, `the gateway did not open ${env.line.path}`);

  const send = async (batch: Specimen[], corruptFirstFrameOf?: string): Promise<void> => {
    for (const specimen of batch) {
      const corrupt = specimen.accession === corruptFirstFrameOf;
      const transfer = await analyzer.send(specimen, corrupt ? { corruptChecksum: [0] } : {});
      run.sent.push(...specimen.results);
      run.stored.inserted += transfer.summary.inserted;
      run.stored.rejected += transfer.summary.rejected;
      const stored = transfer.summary.rejected > 0 ? `stored, ${transfer.summary.rejected} rejected` : 'stored';
      say(`  ${specimen.accession}  ${specimen.description}  → ${stored}`);
      if (corrupt) {
        if (transfer.checksumErrors === 0) throw new Error('the corrupted frame was not refused by the gateway');
        say(`             fault: frame 1 arrived with a corrupted checksum → NAKed by the gateway, resent by the analyzer, accepted`);
      }
    }
  };
  const keys = (): string[] => run.sent.map((r) => r.key);
  const sinkNames = run.gateway.sinks.map((s) => s.name);
  const delivered = (): string => sinkNames.map((s) => `${s} ${tally.deliveredOf(s, keys())}/${keys().length}`).join('   ');
  const converged = (what: string): Promise<void> =>
    waitFor(
      () => sinkNames.every((s) => tally.deliveredOf(s, keys()) === keys().length),
      PHASE_TIMEOUT_MS,
      () => `${what}: after ${PHASE_TIMEOUT_MS / 1000} s only ${delivered()} delivered (${env.logFile})`,
    );
  const fhir = env.fhir?.server;
  const down = fhir ? 'The LIMS and the FHIR server are' : 'The LIMS is';

  say('');
  say(`1. Results flow from the analyzer to ${sinkNames.length === 2 ? 'both' : `all ${sinkNames.length}`} sinks`);
  const first = specimens(4);
  await send(first, first[1]!.accession);
  await converged('results flow');
  say(`  delivered  ${delivered()}`);

  say('');
  say(`2. ${down} down for ${OUTAGE_MS / 1000} s: results wait in the outbox, then go`);
  const outageStart = systemClock.now();
  env.lims.configure({ outage: true });
  fhir?.configure({ outage: true });
  say(`  ${fhir ? 'LIMS and FHIR server' : 'LIMS'} down (every connection dropped)`);
  await send(specimens(4));
  const noticed = (): boolean => tally.retries('lims').count > 0 && (!fhir || tally.retries('fhir').count > 0);
  await waitFor(() => tally.deliveredOf('postgres', keys()) === keys().length && noticed(), PHASE_TIMEOUT_MS, 'the outage was not noticed');
  say(`  delivered  ${delivered()}   (lims: "${tally.retries('lims').last ?? 'unreachable'}"; its drain pauses and probes)`);
  if (fhir) say(`             (fhir: "${tally.retries('fhir').last ?? 'unreachable'}")`);
  await sleep(Math.max(0, outageStart + OUTAGE_MS - systemClock.now()));
  env.lims.configure({ outage: false });
  fhir?.configure({ outage: false });
  const back = systemClock.now();
  say(`  LIMS back after ${((back - outageStart) / 1000).toFixed(1)} s${fhir ? ', the FHIR server too' : ''}`);
  await converged('after the LIMS outage');
  say(`  delivered  ${delivered()}   (the waiting results went ${((systemClock.now() - back) / 1000).toFixed(1)} s after the LIMS came back)`);

  say('');
  say('3. The gateway crashes in the middle of a delivery and is restarted on the same data directory');
  env.lims.configure({ latencyMs: SLOW_LIMS_MS });
  say(`  LIMS slowed to ${SLOW_LIMS_MS} ms per request, so its drain is still busy when the crash comes`);
  // One batch per sink is applied by the sink but its answer is still on the way when the gateway dies.
  for (const sink of run.gateway.sinks) sink.holdNextAnswer();
  const third = specimens(6);
  await send(third);
  const thirdKeys = third.flatMap((s) => s.results.map((r) => r.key));
  const underWay = (): boolean => run.gateway.sinks.every((s) => s.lostAnswers().rows.length > 0) && tally.deliveredOf('lims', thirdKeys) >= 4;
  await waitFor(underWay, PHASE_TIMEOUT_MS, 'the delivery never got under way');
  const before = delivered();
  const lost = await crashGateway(run.gateway);
  say(`  crash: the gateway stopped abruptly with ${before} delivered`);
  for (const [sink, answers] of lost) {
    if (answers.rows.length === 0) continue;
    const where = { postgres: 'committed in result_load', lims: 'applied by the LIMS', fhir: 'created on the FHIR server' }[sink] ?? 'applied';
    say(`    ${sink.padEnd(9)} ${answers.rows.length} results in flight, ${answers.applied} of them already ${where}: the answers were lost`);
  }
  env.lims.configure({ latencyMs: 0 });
  const restart = systemClock.now();
  run.gateway = await env.openGateway(listeners);
  say(`  restart: a new gateway opened ${env.config.gateway.dataDir}; the outbox still holds everything not recorded as sent`);
  await converged('after the restart');
  say(`  delivered  ${delivered()}   (converged ${((systemClock.now() - restart) / 1000).toFixed(1)} s after the restart)`);
  say(
    `  the re-sent results were recognized: postgres absorbed ${tally.replays('postgres')} (load_count + 1), the LIMS answered ${env.lims.stats().replays} from their idempotency keys`,
  );
  if (fhir)
    say(`  the FHIR server found ${fhir.stats().unchanged} re-sent Observations already there by their identifier (conditional create), creating none twice`);
  await hostQuery({ env, analyzer, send, specimens, converged, delivered, say });
  const hl7 = env.hl7Instrument;
  if (env.hl7Line && hl7) {
    const step = { line: env.hl7Line, instrument: hl7, lims: env.lims, committed: () => hl7Events, converged, say };
    const wait = (done: () => boolean, what: string): Promise<void> => waitFor(done, PHASE_TIMEOUT_MS, what);
    const { sent, inserted } = await hl7Query({ ...step, waitFor: wait });
    run.sent.push(...sent);
    run.stored.inserted += inserted;
    run.hl7 = sent.map((r) => r.key);
    await converged("the HL7 analyzer's results");
    say(`  delivered  ${delivered()}   (the HL7 analyzer's results with the others)`);
    say(`  the LIMS was told each order reached the HL7 analyzer: ${(await hl7Dispatched({ ...step, waitFor: wait })).join(', ')}`);
  }
  const refused = tally.refused();
  if (refused.length) throw new Error(`results were refused: ${refused.slice(0, 3).join('; ')}`);
  return run;
}

/** Step 4: the analyzer asks which tests two specimens need; the LIMS has orders for one; exactly those are run. */
async function hostQuery(step: {
  env: DemoEnvironment;
  analyzer: DemoAnalyzer;
  send: (batch: Specimen[]) => Promise<void>;
  specimens: (count: number, codes?: readonly string[], accessions?: readonly string[]) => Specimen[];
  converged: (what: string) => Promise<void>;
  delivered: () => string;
  say: Say;
}): Promise<void> {
  const { env, analyzer, send, specimens, converged, delivered, say } = step;
  const [ordered, none] = ['DEMO-Q001', 'DEMO-Q002'];
  const loinc = (code: string): string => env.instrument.mapping.find((m) => m.code === code)!.loinc;
  env.lims.loadOrders([
    {
      accession: ordered!,
      orders: ['GLU', 'K'].map((code, i) => ({ orderId: `demo-order-${i + 1}`, loinc: loinc(code), orderedAt: new Date().toISOString() })),
    },
  ]);
  say('');
  say('4. The analyzer asks the gateway which tests two specimens need (a host query); the LIMS has orders for one');
  const deadline = 10_000;
  const asked = await analyzer.query([ordered!, none!], deadline);
  if (asked.kind !== 'answered') throw new Error(`the host query was not answered within the analyzer's ${deadline / 1000} s: ${asked.kind}`);
  const codes = asked.orders.get(ordered!) ?? [];
  if (codes.join(',') !== 'GLU,K' || asked.orders.has(none!))
    throw new Error(`the answer ordered ${JSON.stringify([...asked.orders])}, not GLU and K for ${ordered} alone`);
  say(`  query  ${ordered}, ${none} → answered ${asked.enqAfterMs} ms after the query: ${ordered} ${codes.join(', ')}; ${none} nothing to run`);
  await send(specimens(1, codes, [ordered!]));
  await converged('the ordered tests');
  say(`  delivered  ${delivered()}   (exactly the ordered tests)`);
  await waitFor(() => Object.keys(env.lims.dispatches()).length === 2, PHASE_TIMEOUT_MS, 'the LIMS was not told the orders reached the analyzer');
  say(`  the LIMS was told each order reached the analyzer: ${Object.keys(env.lims.dispatches()).join(', ')}`);
}

/** Polls `done` until it holds; a timeout is a demo failure with the given reason. */
async function waitFor(done: () => boolean, timeoutMs: number, reason: string | (() => string)): Promise<void> {
  const until = systemClock.now() + timeoutMs;
  while (!done()) {
    if (systemClock.now() > until) throw new Error(typeof reason === 'string' ? reason : reason());
    await sleep(25);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
