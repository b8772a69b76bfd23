// The states the browser tests show and screenshot: a healthy morning run, and trouble (an unplugged analyzer,
// the LIMS down, and something in every work queue). Plausible laboratory data, no demographics.
import { dayView, windowStart } from '../../src/web/status/day-view.js';
import { fields, instrument, sink } from './fake-source.js';
import type { Harness } from './harness.js';

const MIN = 60_000;

function results(h: Harness): void {
  const add = (accession: string, change: Parameters<typeof h.source.addResult>[1], ageMin: number): void => {
    const r = h.source.addResult(accession, { resultedAt: new Date(h.clock.now - ageMin * MIN).toISOString().slice(0, 19) + '+00:00', ...change });
    h.source.setDelivery(r.dedupKey, 'postgres', 'sent');
    if (ageMin > 2) h.source.setDelivery(r.dedupKey, 'lims', 'sent');
  };
  add('A26-0001', { loinc: '2345-7', analyzerCode: 'GLU', valueText: '5.4', unit: 'mmol/L', referenceRange: '3.9-5.5' }, 9);
  add('A26-0001', { loinc: '2823-3', analyzerCode: 'K', valueText: '5.9', unit: 'mmol/L', flags: ['H'] }, 9);
  add('A26-0002', { loinc: '2160-0', analyzerCode: 'CREA', valueText: '88', unit: 'umol/L', referenceRange: '62-106' }, 6);
  add('A26-0003', { instrumentId: 'hema1', loinc: '6690-2', analyzerCode: 'WBC', valueText: '11.2', unit: '10*9/L', flags: ['H'] }, 4);
  add('QC-L1', { instrumentId: 'hema1', loinc: '718-7', analyzerCode: 'HGB', valueText: '12.0', unit: 'g/dL', qc: true }, 1);
}

/** Every instrument talking, both sinks delivering. */
export function healthyState(h: Harness): void {
  const now = h.clock.now;
  h.source.state.instruments = [
    instrument('chem1', {
      since: now - 3 * 3600_000,
      lastByteAt: now - 4000,
      lastMessageAt: now - 4000,
      messagesToday: 214,
      resultsToday: 1290,
      naks: 1,
      checksumErrors: 1,
    }),
    instrument('hema1', {
      port: 'tcp://10.20.0.31:5100',
      since: now - 5 * 3600_000,
      lastByteAt: now - 21_000,
      lastMessageAt: now - 21_000,
      messagesToday: 96,
      resultsToday: 2112,
    }),
  ];
  h.source.state.sinks = [
    sink('postgres', { pending: 0, deliveredLastHour: 402, etaSeconds: 0 }),
    sink('lims', { pending: 3, oldestPendingAt: now - 2000, deliveredLastHour: 399, etaSeconds: 1 }),
  ];
  results(h);
}

/** An unplugged analyzer, the LIMS paused, and one item in each work queue. */
export function errorState(h: Harness): void {
  healthyState(h);
  const now = h.clock.now;
  h.source.state.instruments.push(
    instrument('urine1', {
      state: 'waiting-for-device',
      reason: 'device not available: Error: No such file or directory, cannot open /dev/serial/by-id/usb-Prolific_urine1-if00-port0',
      port: '/dev/serial/by-id/usb-Prolific_urine1-if00-port0',
      since: now - 7 * MIN,
      lastByteAt: now - 7 * MIN,
      lastMessageAt: now - 9 * MIN,
      nextAttemptAt: now + 12_000,
      messagesToday: 31,
      resultsToday: 180,
      rejected: 2,
    }),
  );
  h.source.state.sinks[1] = sink('lims', {
    circuit: 'paused',
    reason: 'connect ECONNREFUSED 10.20.0.5:443',
    nextProbeAt: now + 25_000,
    pending: 1843,
    oldestPendingAt: now - 42 * MIN,
    deliveredLastHour: 120,
    etaSeconds: null,
  });
  h.source.state.deadLetters.push({
    sink: 'lims',
    dedupKey: 'key-A26-0002',
    accession: 'A26-0002',
    loinc: '2160-0',
    reason: '422 Unprocessable Entity: unknown test code 2160-0 for this order',
    attempts: 1,
    failedAt: now - 15 * MIN,
  });
  h.source.state.conflicts.push({
    id: 3,
    dedupKey: 'key-A26-0001',
    origin: 'ingest',
    reason: 'same key, different clinical content',
    detectedAt: now - 5 * MIN,
    occurrences: 1,
    stored: fields('A26-0001', { valueText: '5.9', flags: ['H'], resultedAt: '2026-11-30T11:51:00+00:00' }),
    incoming: fields('A26-0001', { valueText: '4.2', flags: ['H'], resultedAt: '2026-11-30T11:51:00+00:00' }),
  });
  h.source.state.rejectedCaptures.push({
    id: 12,
    instrumentId: 'urine1',
    protocol: 'astm',
    receivedAt: now - 20 * MIN,
    reasons: [{ reason: 'no mapping for analyzer code', analyzerCode: 'UBG', accession: 'A26-0007' }],
  });
}

const HOUR = 3_600_000;
// A laboratory's day: quiet at night, the morning run from 7 to 11, a smaller afternoon peak.
const profile = [2, 1, 1, 1, 1, 2, 8, 60, 140, 160, 120, 70, 50, 60, 90, 70, 40, 20, 12, 8, 6, 4, 3, 2];

/** The healthy state with its last 24 hours: results per hour, and a LIMS outage at 13:00 that built a backlog. */
export function dayState(h: Harness): void {
  healthyState(h);
  const now = h.clock.now;
  const first = windowStart(now);
  const hourOf = (i: number): number => new Date((first + i) * HOUR).getUTCHours();
  const hours = ['chem1', 'hema1'].flatMap((id, k) =>
    profile.map((_, i) => ({
      instrumentId: id,
      hour: first + i,
      messages: 0,
      results: Math.round(profile[hourOf(i)]! * (k === 0 ? 6 : 9)),
      rejected: id === 'chem1' && hourOf(i) === 9 ? 14 : 0,
    })),
  );
  const perHour = (i: number): number => hours.filter((x) => x.hour === first + i).reduce((a, b) => a + b.results, 0);
  const outage = (i: number): boolean => hourOf(i) >= 13 && hourOf(i) < 15;
  const delivered = ['postgres', 'lims'].flatMap((sinkName) =>
    profile.map((_, i) => ({
      sink: sinkName,
      hour: first + i,
      delivered: sinkName === 'lims' && outage(i) ? 0 : perHour(i) + (sinkName === 'lims' && hourOf(i) === 15 ? 1_400 : 0),
    })),
  );
  const backlog = profile.flatMap((_, i) => {
    const at = (first + i) * HOUR + 20 * 60_000;
    const lims = outage(i) ? perHour(i) * (hourOf(i) - 12) : hourOf(i) === 15 ? 180 : 3;
    return [
      { sink: 'postgres', at, pending: 0 },
      { sink: 'lims', at, pending: lims },
    ];
  });
  const utcLabel = (ms: number): string => String(new Date(ms).getUTCHours()).padStart(2, '0');
  h.source.state.day = dayView({
    now,
    instruments: ['chem1', 'hema1'],
    hours,
    sinks: [
      { sink: 'postgres', pending: 0 },
      { sink: 'lims', pending: 3 },
    ],
    delivered,
    backlog,
    hourLabel: utcLabel,
  });
}

/** A new analyzer being brought in: its settings detected on port 3, and the codes another new one sent, unmapped. */
export function onboardingState(h: Harness): void {
  healthyState(h);
  const now = h.clock.now;
  h.source.state.instruments.push(
    instrument('chem2', {
      port: '/dev/labgate/port3',
      since: now - 95_000,
      lastByteAt: now - 4_000,
      detection: {
        state: 'found',
        summary: 'ASTM at 9600 8N1: ENQ every 10 s',
        yaml: ['driver: astm', 'transport:', '  kind: serial', '  path: "/dev/labgate/port3"', '  baudRate: 9600', '  dataBits: 8', '  parity: none'],
        note: '7E1 reads these bytes the same way; if frames are refused for checksums later, try dataBits: 7 and parity: even',
        trials: [{ setting: '9600 8N1', outcome: 'recognized', why: 'makes sense', at: now - 4_000 }],
      },
    }),
  );
  const seen = (code: string, value: string, unit: string | null, loinc: string | null, problem: string | null, yaml: string) => ({
    code,
    seen: 1,
    lastValue: value,
    lastUnit: unit,
    lastAt: now - 60_000,
    loinc,
    problem,
    yaml,
  });
  h.source.state.codesSeen = [
    {
      instrumentId: 'urine1',
      codes: [
        seen('PRO', '30', 'mg/dL', null, 'not mapped', '- { code: "PRO", loinc: "", unit: "mg/dL" }'),
        seen('UBG', '0.2', 'mg/dL', null, 'not mapped', '- { code: "UBG", loinc: "", unit: "mg/dL" }'),
        seen('GLU', 'Negative', null, '5792-7', null, '- { code: "GLU", loinc: "5792-7", unit: null }'),
      ],
      total: 3,
      needMapping: 2,
      page: 1,
      pages: 1,
    },
  ];
  h.source.state.rejectedCaptures.push({
    id: 14,
    instrumentId: 'urine1',
    protocol: 'astm',
    receivedAt: now - 60_000,
    reasons: [
      { reason: "unmapped test code 'PRO'", analyzerCode: 'PRO', accession: 'A26-0107' },
      { reason: "unmapped test code 'UBG'", analyzerCode: 'UBG', accession: 'A26-0107' },
    ],
  });
}

/**
 * The same two analyzers a minute after `systemctl reload labgate`: chem2 runs with the detected settings copied in
 * and sent its first result; urine1's codes are mapped, and the message its old mapping refused waits for Reprocess.
 */
export function reloadedState(h: Harness): void {
  onboardingState(h);
  const now = h.clock.now;
  h.source.state.reload = {
    at: now - 60_000,
    outcome: 'applied',
    summary: 'chem2 restarted (transport changed); urine1: the new mapping from its next message',
    problems: [],
    waitingForRestart: [],
  };
  const chem2 = h.source.state.instruments.find((i) => i.id === 'chem2')!;
  delete chem2.detection;
  Object.assign(chem2, { since: now - 58_000, lastByteAt: now - 20_000, lastMessageAt: now - 20_000, messagesToday: 1, resultsToday: 2 });
  for (const [loinc, code, valueText] of [
    ['2345-7', 'GLU', '6.1'],
    ['2823-3', 'K', '4.4'],
  ] as const) {
    const r = h.source.addResult('A26-0112', {
      instrumentId: 'chem2',
      loinc,
      analyzerCode: code,
      valueText,
      unit: 'mmol/L',
      resultedAt: new Date(now - 20_000).toISOString().slice(0, 19) + '+00:00',
    });
    h.source.setDelivery(r.dedupKey, 'postgres', 'sent');
    h.source.setDelivery(r.dedupKey, 'lims', 'sent');
  }
  const urine = h.source.state.codesSeen![0]!;
  urine.codes = urine.codes.map((c) => ({ ...c, loinc: c.loinc ?? (c.code === 'PRO' ? '2888-6' : '13658-0'), problem: null }));
}
