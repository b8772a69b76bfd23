// Pure conversions from the gateway's own records (port status, drain status, outbox counts, stored rows and
// conflict payloads) into the page's views.
import type { DrainStatus } from '../../delivery/drain.js';
import type { SinkCounts } from '../../store/outbox-operator.js';
import type { RecentResult } from '../../store/reads.js';
import type { PortStatus } from '../../transport/supervisor.js';
import type { TodayFigures } from './daily-counters.js';
import type { CircuitView, InstrumentView, OrdersToday, ResultFields, SinkView } from './source.js';

/** A stored result as the store lists it. */
export type StoredResult = RecentResult;

/** An instrument's view from its supervisor's status and today's figures. */
export function instrumentView(p: PortStatus, today: TodayFigures, orders?: OrdersToday): InstrumentView {
  return {
    id: p.instrument,
    state: p.state,
    reason: p.reason ?? null,
    port: p.endpoint,
    since: p.since,
    lastByteAt: p.lastByteAt ?? null,
    lastMessageAt: today.lastMessageAt,
    nextAttemptAt: p.nextAttemptAt ?? null,
    messagesToday: today.messages,
    resultsToday: today.results,
    naks: today.naks,
    checksumErrors: today.checksumErrors,
    rejected: today.rejected,
    refusedConnections: p.refusedConnections ?? 0,
    ...(orders ? { orders } : {}),
    ...(p.lostMessages ? { lostMessages: p.lostMessages } : {}),
    ...(p.refusedOverLimit ? { refusedOverLimit: p.refusedOverLimit } : {}),
    ...(p.detection
      ? { detection: { state: p.detection.state, summary: p.detection.summary, yaml: p.detection.yaml, note: p.detection.note, trials: p.detection.trials } }
      : {}),
  };
}

const CIRCUIT: Record<DrainStatus['circuit'], CircuitView> = { closed: 'delivering', open: 'paused', 'half-open': 'probing' };

/** A sink's view from its outbox counts, last hour's deliveries and its drain (absent: the sink is not running). */
export function sinkView(c: SinkCounts, deliveredLastHour: number, drain: DrainStatus | undefined): SinkView {
  // The drain's one-minute rate follows a recovery quickly; the hour's count covers a quiet minute.
  const rate = drain && drain.recentRate > 0 ? drain.recentRate : deliveredLastHour / 3600;
  return {
    sink: c.sink,
    pending: c.pending,
    oldestPendingAt: c.oldestPendingAt,
    deliveredLastHour,
    dead: c.dead,
    conflicts: c.conflict,
    circuit: drain ? CIRCUIT[drain.circuit] : 'paused',
    reason: drain ? (drain.circuit === 'closed' ? null : drain.lastError) : 'no drain is running for this sink',
    nextProbeAt: drain?.nextProbeAt ?? null,
    etaSeconds: c.pending === 0 ? 0 : rate > 0 ? Math.ceil(c.pending / rate) : null,
  };
}

/** A stored result's clinical fields. */
export function storedFields(r: StoredResult): ResultFields {
  return {
    accession: r.accession,
    instrumentId: r.instrumentId,
    loinc: r.analyteLoinc,
    analyzerCode: r.analyzerCode,
    valueText: r.valueText,
    unit: r.unit,
    flags: r.flags,
    // The analyzer's letter beside the normalized word: `preliminary (W)` tells a technician why it is not final.
    status: r.statusCode === null ? r.status : `${r.status} (${r.statusCode})`,
    resultedAt: r.resultedAt,
    referenceRange: r.referenceRange,
    qc: r.qc,
  };
}

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** A conflict version from its payload JSON (a ResultPayload, or a sink's bare result); null when unreadable. */
export function payloadFields(json: string): ResultFields | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null) return null;
  const outer = parsed as Record<string, unknown>;
  const r = (typeof outer.result === 'object' && outer.result !== null ? outer.result : outer) as Record<string, unknown>;
  const source = (typeof r.source === 'object' && r.source !== null ? r.source : {}) as Record<string, unknown>;
  return {
    accession: text(r.accession),
    instrumentId: text(r.instrumentId),
    loinc: text(r.analyteLoinc),
    analyzerCode: text(source.analyzerCode),
    valueText: text(r.valueText),
    unit: typeof r.unit === 'string' ? r.unit : null,
    flags: Array.isArray(r.flags) ? r.flags.map(text) : [],
    status: typeof r.statusCode === 'string' ? `${text(r.status)} (${r.statusCode})` : text(r.status),
    resultedAt: text(r.resultedAt),
    referenceRange: typeof r.referenceRange === 'string' ? r.referenceRange : null,
    qc: r.qc === true,
  };
}

/** A two-way instrument's figures of the day (store/order-days.ts) as the page shows them. */
export function ordersToday(figures: Readonly<Record<string, number>> = {}): OrdersToday {
  const noInformation = Object.entries(figures)
    .filter(([figure]) => figure.startsWith('no-information:'))
    .map(([figure, count]) => ({ reason: figure.slice('no-information:'.length), count }))
    .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return {
    queries: figures['queries'] ?? 0,
    answeredWithOrders: figures['answered-orders'] ?? 0,
    noInformation,
    answersFailed: figures['answers-failed'] ?? 0,
    downloads: figures['downloads'] ?? 0,
  };
}
