// The StatusSource of a running gateway: reads the supervisors, the drains and the store; acts through the store
// (which audits every change with the actor and the time). What the store cannot do yet is injected as optional
// functions, so the composition root wires what exists and the page says plainly what is not available.
import type { DrainStatus } from '../../delivery/drain.js';
import { isLabgateError } from '../../errors.js';
import type { DeadLetter, DeadLetterFilter, SinkCounts } from '../../store/outbox-operator.js';
import type { IngestSummary, OpenConflict, RejectedCapture } from '../../store/store.js';
import type { PortStatus } from '../../transport/supervisor.js';
import { DailyCounters } from './daily-counters.js';
import { instrumentView, payloadFields, sinkView, storedFields, type StoredResult } from './gateway-views.js';
import type { ActionOutcome, ConflictChoice, DeliveryState, StatusSnapshot, StatusSource } from './source.js';

/** The store's read and operator methods the page uses (a Store satisfies it). */
export interface StatusStore {
  recentResults(limit: number): StoredResult[];
  openConflicts(limit: number): OpenConflict[];
  rejectedCaptures(limit: number): RejectedCapture[];
  outbox: {
    counts(): SinkCounts[];
    sentSince(sink: string, since: number): number;
    deadLetters(filter: DeadLetterFilter, limit?: number): DeadLetter[];
    retryDeadLetters(filter: DeadLetterFilter, actor: string): number;
  };
}

/** Everything the gateway source reads and calls, injected by the composition root. */
export interface GatewayStatusParts {
  gatewayId: string;
  now: () => number;
  store: StatusStore;
  /** Every supervisor's `snapshot()`. */
  instruments: () => PortStatus[];
  /** Every drain's `status()`. */
  drains: () => DrainStatus[];
  /** Wakes a sink's drain after dead letters were queued again (`drain.notify()`). */
  wake?: (sink: string) => void;
  /** Decodes a rejected capture with the current configuration and `store.reprocess`es it. */
  reprocess?: (captureId: number, actor: string) => IngestSummary;
  /** Resolves a conflict, audited; false when it is not open (any more). Not in the store yet. */
  resolveConflict?: (id: number, choice: ConflictChoice, actor: string) => boolean;
  /** Outbox state per sink of each key (one query for the page's results). Not in the store yet. */
  deliveryStates?: (keys: readonly string[]) => Map<string, { sink: string; state: DeliveryState }[]>;
  /** Accession and LOINC of a stored result, to name a dead letter's sample. Not in the store yet. */
  resultOf?: (dedupKey: string) => { accession: string; analyteLoinc: string } | undefined;
  /** How many recent results and queue items to show. Default 50 and 100. */
  limits?: { results?: number; queue?: number };
  /** Start of "today" for the counters; default local midnight. */
  startOfDay?: (now: number) => number;
}

const HOUR_MS = 3_600_000;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A StatusSource over the running gateway's parts. */
export function gatewayStatusSource(parts: GatewayStatusParts): StatusSource {
  const daily = new DailyCounters(parts.startOfDay);
  const queueLimit = parts.limits?.queue ?? 100;
  return {
    snapshot: () => snapshot(parts, daily, parts.limits?.results ?? 50, queueLimit),
    retryDeadLetter: (sink, which, actor) => {
      const filter: DeadLetterFilter = which === 'all' ? { sink, all: true } : { sink, key: which.key };
      const n = parts.store.outbox.retryDeadLetters(filter, actor);
      if (n === 0) return { kind: 'not-found', message: 'No such dead letter any more (someone may have retried it already).' };
      parts.wake?.(sink);
      return { kind: 'done', message: `${plural(n, 'dead letter')} for ${sink} queued again.` };
    },
    resolveConflict: (id, choice, actor) => {
      if (!parts.resolveConflict) return { kind: 'failed', message: 'Resolving conflicts is not available in this version of labgate.' };
      if (!parts.resolveConflict(id, choice, actor)) return { kind: 'not-found', message: `Conflict ${id} is not open any more.` };
      return { kind: 'done', message: choice === 'keep' ? `Conflict ${id}: stored version kept.` : `Conflict ${id}: new version forwarded as a correction.` };
    },
    reprocessCapture: (id, actor) => reprocess(parts, id, actor),
  };
}

function reprocess(parts: GatewayStatusParts, id: number, actor: string): ActionOutcome {
  if (!parts.reprocess) return { kind: 'failed', message: 'Reprocessing is not available in this version of labgate.' };
  try {
    const s = parts.reprocess(id, actor);
    const still = s.rejected > 0 ? `; still rejected: ${plural(s.rejected, 'result')} (fix the mapping and try again)` : '';
    return { kind: 'done', message: `Capture ${id} reprocessed: ${s.inserted} stored, ${s.absorbed} already known, ${s.conflicts} conflicts${still}.` };
  } catch (err) {
    if (isLabgateError(err, 'USAGE')) return { kind: 'not-found', message: err.message };
    throw err;
  }
}

function snapshot(parts: GatewayStatusParts, daily: DailyCounters, resultLimit: number, queueLimit: number): StatusSnapshot {
  const now = parts.now();
  const { store } = parts;
  const drains = new Map(parts.drains().map((d) => [d.sink, d]));
  const counts = store.outbox.counts();
  for (const sink of drains.keys()) {
    if (!counts.some((c) => c.sink === sink)) counts.push({ sink, pending: 0, sent: 0, dead: 0, conflict: 0, oldestPendingAt: null });
  }
  const stored = store.recentResults(resultLimit);
  const delivery = parts.deliveryStates?.(stored.map((r) => r.dedupKey)) ?? new Map<string, { sink: string; state: DeliveryState }[]>();
  return {
    gatewayId: parts.gatewayId,
    now,
    instruments: parts.instruments().map((p) => instrumentView(p, daily.today(p, now))),
    sinks: counts.map((c) => sinkView(c, store.outbox.sentSince(c.sink, now - HOUR_MS), drains.get(c.sink))),
    recentResults: stored.map((r) => ({ ...storedFields(r), dedupKey: r.dedupKey, delivery: delivery.get(r.dedupKey) ?? [] })),
    deadLetters: store.outbox.deadLetters({ all: true }, queueLimit).map((d) => {
      const result = parts.resultOf?.(d.dedupKey);
      return { sink: d.sink, dedupKey: d.dedupKey, accession: result?.accession ?? null, loinc: result?.analyteLoinc ?? null, reason: d.reason ?? 'no reason recorded', attempts: d.attempts, failedAt: d.updatedAt };
    }),
    conflicts: store.openConflicts(queueLimit).map((c) => ({
      id: c.id,
      dedupKey: c.dedupKey,
      origin: c.origin,
      reason: c.reason,
      detectedAt: c.detectedAt,
      occurrences: c.occurrences,
      stored: payloadFields(c.storedPayload),
      incoming: payloadFields(c.incomingPayload),
    })),
    rejectedCaptures: store.rejectedCaptures(queueLimit).map((r) => ({ ...r, reasons: r.reasons.map((x) => ({ ...x })) })),
  };
}
