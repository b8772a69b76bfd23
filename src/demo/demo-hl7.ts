// Step 5 of the demo: an HL7 analyzer on its own serial line asks the gateway which tests a specimen needs (QRY^Q02,
// the v2.3.1 display query), accepts the answer (QCK^Q02 then DSR^Q03, each accepted), runs exactly the ordered tests
// and sends their results (ORU^R01). The results are the demo's like any other: the summary proves them once in
// every sink, keyed by what the analyzer sent, not by what the gateway reports.
import { Hl7QueryingAnalyzer } from '../../drivers/hl7/emulator-query.js';
import type { Config } from '../config/schema.js';
import type { DriverEvent } from '../runner-contract.js';
import { dedupKey } from '../result.js';
import type { LimsServer } from '../lims-server/server.js';
import type { SentResult } from './specimens.js';
import type { VirtualSerialLine } from './virtual-serial-line.js';

/** What the step needs from the scenario. */
export interface Hl7Step {
  line: VirtualSerialLine;
  instrument: Config['instruments'][number];
  lims: LimsServer;
  /** The gateway's commit events of this instrument since the step began. */
  committed: () => Extract<DriverEvent, { kind: 'message' }>[];
  converged: (what: string) => Promise<void>;
  waitFor: (done: () => boolean, what: string) => Promise<void>;
  say: (line: string) => void;
}

const ACCESSION = 'DEMO-H001';
const values: Record<string, string> = { GLU: '5.8', K: '4.3' };

/** Runs the step; returns the results the analyzer sent (the scenario adds them to its tally of what was sent). */
export async function hl7Query(step: Hl7Step): Promise<{ sent: SentResult[]; inserted: number }> {
  const { line, instrument, lims, say } = step;
  const loinc = (code: string): string => instrument.mapping.find((m) => m.code === code)!.loinc;
  lims.loadOrders([
    {
      accession: ACCESSION,
      orders: ['GLU', 'K'].map((code, i) => ({ orderId: `demo-hl7-order-${i + 1}`, loinc: loinc(code), orderedAt: new Date().toISOString() })),
    },
  ]);
  say('');
  say(`5. An HL7 analyzer (${instrument.id}, QRY^Q02 over MLLP on its own serial line) asks which tests ${ACCESSION} needs`);
  await step.waitFor(() => line.open, `the gateway did not open ${line.path}`);
  const analyzer = new Hl7QueryingAnalyzer(line.analyzer(), 'display-query');
  const deadline = 10_000;
  const asked = await analyzer.query(ACCESSION, deadline);
  if (asked.kind !== 'answered' || !asked.found) throw new Error(`the HL7 query was not answered with orders within ${deadline / 1000} s`);
  if (asked.codes.join(',') !== 'GLU,K') throw new Error(`the HL7 answer ordered ${asked.codes.join(', ')}, not GLU and K`);
  say(`  query  ${ACCESSION} → QCK^Q02 ${asked.firstByteAfterMs} ms after the query, DSR^Q03 accepted: ${asked.codes.join(', ')}`);
  // OBX-14 is written to the second in UTC (the instrument's zone), so the key is the demo's own, not the gateway's.
  const resultedAt = Math.floor(Date.now() / 1000) * 1000;
  const ack = await analyzer.sendResults(ACCESSION, asked.codes, (code) => values[code] ?? '1', 10_000, resultedAt);
  if (ack !== 'AA') throw new Error(`the gateway answered the HL7 results with ${ack}, not AA`);
  const sent = asked.codes.map((code) => ({
    accession: ACCESSION,
    code,
    text: `${code} ${values[code]} mmol/L`,
    key: dedupKey({ accession: ACCESSION, analyteLoinc: loinc(code), instrumentId: instrument.id, resultedAt }),
  }));
  const inserted = step.committed().reduce((n, e) => n + e.summary.inserted, 0);
  say(`  ORU^R01 ${ACCESSION}  ${sent.map((r) => r.text).join(', ')}  → AA (stored)`);
  return { sent, inserted };
}

/** Waits until the LIMS was told each of the HL7 analyzer's orders reached it; returns their ids. */
export async function hl7Dispatched(step: Hl7Step): Promise<string[]> {
  const mine = (): string[] => Object.keys(step.lims.dispatches()).filter((k) => k.endsWith(`|${step.instrument.id}`));
  await step.waitFor(() => mine().length === 2, `the LIMS was not told the HL7 orders reached ${step.instrument.id}`);
  return mine();
}
