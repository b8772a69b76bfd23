// The StatusSource of a running gateway: reads the supervisors, the drains and the store; acts through the store
// (which audits every change with the actor and the time). The store's newer methods are optional in StatusStore,
// so a store without them still serves the page, which then says plainly what is not available.
import type { AnalyteMapping } from '../../config/mapping.js';
import type { DrainStatus } from '../../delivery/drain.js';
import { isLabgateError } from '../../errors.js';
import type { DeadLetter, DeadLetterFilter, SinkCounts } from '../../store/outbox-operator.js';
import type { IngestSummary } from '../../message.js';
import type {
  BacklogSample,
  CodeSeen,
  HourFigures,
  InstrumentFigures,
  OpenConflict,
  RejectedCapture,
  Resolution,
  ResultRef,
  SinkDelivery,
  SinkHour,
} from '../../store/store.js';
import type { PortStatus } from '../../transport/supervisor.js';
import { codesPage } from './codes-view.js';
import { PROBLEMS_LISTED } from './listed.js';
import { dayView, windowStart } from './day-view.js';
import { DailyCounters } from './daily-counters.js';
import { instrumentView, ordersToday, payloadFields, sinkView, storedFields, type StoredResult } from './gateway-views.js';
import type {
  ActionOutcome,
  CodesPageOutcome,
  ConflictChoice,
  DeliveryState,
  InstrumentCodesView,
  NewPortCard,
  ReloadView,
  StatusSnapshot,
  StatusSource,
} from './source.js';

/** The store's read and operator methods the page uses (a Store satisfies it). */
export interface StatusStore {
  recentResults(limit: number): StoredResult[];
  openConflicts(limit: number): OpenConflict[];
  rejectedCaptures(limit: number): RejectedCapture[];
  /** How many rejected captures and open conflicts there are in all. */
  queueCounts?(): { rejectedCaptures: number; conflicts: number };
  /** Resolves a conflict in one transaction, audited with the actor. */
  resolveConflict?(id: number, choice: ConflictChoice, actor: string): Resolution;
  /** Outbox state per sink of each result, in one query. */
  deliveryStates?(results: readonly { dedupKey: string; resultedAt: string }[]): Map<string, SinkDelivery[]>;
  /** Accession and LOINC of a stored result, to name a dead letter's sample. */
  resultOf?(ref: ResultRef): { accession: string; analyteLoinc: string } | undefined;
  /** Every instrument's figures for a local day and its last message time (kept by ingest; survives a restart). */
  instrumentFigures?(day: string): InstrumentFigures[];
  /** The analyzer codes an instrument has sent (kept by ingest, at most the store's bound). */
  codesSeen?(instrumentId: string): CodeSeen[];
  /** Every instrument's figures per hour from an epoch hour on (kept by ingest). */
  instrumentHours?(sinceHour: number): HourFigures[];
  /** Each sink's deliveries per hour and backlog samples. */
  sinkFigures?: { deliveredPerHour(sinceHour: number): SinkHour[]; backlogSince(since: number): BacklogSample[] };
  /** Two-way figures of a local day, and the dispatch rows' counts (store/order-store.ts). */
  orders?: {
    figures(day: string): { instrumentId: string; figures: Record<string, number> }[];
    dispatchCounts(): SinkCounts;
    /** Dispatches the LIMS refused for good, listed and retried like the outbox's dead letters. */
    deadLetters: {
      deadLetters(filter: DeadLetterFilter, limit?: number): (DeadLetter & { accession: string })[];
      retryDeadLetters(filter: DeadLetterFilter, actor: string): number;
    };
  };
  /** The counts the gateway's readers share (store/outbox-counts.ts); absent: outbox.counts(). */
  outboxCounts?: { current(): SinkCounts[]; invalidate(): void };
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
  /** Detection on the serial ports no instrument names (their `snapshot()`). */
  newPorts?: () => PortStatus[];
  /** Every drain's `status()`. */
  drains: () => DrainStatus[];
  /** Wakes a sink's drain after dead letters were queued again (`drain.notify()`). */
  wake?: (sink: string) => void;
  /** Decodes a rejected capture with the current configuration and `store.reprocess`es it. */
  reprocess?: (captureId: number, actor: string) => IngestSummary;
  /** How many recent results and queue items to show. Default 50 and 100. */
  limits?: { results?: number; queue?: number };
  /** The local day (`YYYY-MM-DD`) holding an instant, as the store keys its figures; default the process's zone. */
  dayOf?: (now: number) => string;
  /** The last configuration reload's outcome (null before the first). */
  reload?: () => ReloadView | null;
  /** The clock label of an hour on the day charts (`14`); default the gateway's local time. */
  hourLabel?: (startMs: number) => string;
  /** An instrument's code mapping as configured now (after a reload, the new one); undefined when it has none. */
  mappingOf?: (instrumentId: string) => readonly AnalyteMapping[] | undefined;
  /** Instruments in query or download mode: their cards show the day's queries, answers and downloads. */
  twoWay?: ReadonlySet<string>;
}

const HOUR_MS = 3_600_000;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A StatusSource over the running gateway's parts. */
export function gatewayStatusSource(parts: GatewayStatusParts): StatusSource {
  const daily = new DailyCounters(parts.dayOf);
  const queueLimit = parts.limits?.queue ?? 100;
  // An action's effect shows on the next page at once: the shared counts are made anew.
  const changed = (outcome: ActionOutcome): ActionOutcome => {
    parts.store.outboxCounts?.invalidate();
    return outcome;
  };
  return {
    snapshot: () => snapshot(parts, daily, parts.limits?.results ?? 50, queueLimit),
    retryDeadLetter: (sink, which, actor) => changed(retryDeadLetter(parts, sink, which, actor)),
    resolveConflict: (id, choice, actor) => changed(resolveConflict(parts, id, choice, actor)),
    reprocessCapture: (id, actor) => changed(reprocess(parts, id, actor)),
    codes: (instrumentId, page) => codes(parts, instrumentId, page),
  };
}

function retryDeadLetter(parts: GatewayStatusParts, sink: string, which: 'all' | { key: string }, actor: string): ActionOutcome {
  const filter: DeadLetterFilter = which === 'all' ? { sink, all: true } : { sink, key: which.key };
  const n = parts.store.outbox.retryDeadLetters(filter, actor) + (parts.store.orders?.deadLetters.retryDeadLetters(filter, actor) ?? 0);
  if (n === 0) return { kind: 'not-found', message: 'No such dead letter any more (someone may have retried it already).' };
  parts.wake?.(sink);
  return { kind: 'done', message: `${plural(n, 'dead letter')} for ${sink} queued again.` };
}

function codesOf(parts: GatewayStatusParts, instrumentId: string, page: number): InstrumentCodesView | null {
  const read = parts.store.codesSeen;
  if (!read) return null;
  return codesPage(instrumentId, read.call(parts.store, instrumentId), parts.mappingOf?.(instrumentId), page);
}

function codes(parts: GatewayStatusParts, instrumentId: string, page: number): CodesPageOutcome {
  if (!parts.instruments().some((p) => p.instrument === instrumentId)) return { kind: 'not-found', message: 'No configured instrument has that id.' };
  const view = codesOf(parts, instrumentId, page);
  if (view === null) return { kind: 'not-found', message: 'This version of labgate keeps no codes.' };
  if (page > view.pages) return { kind: 'not-found', message: `${instrumentId}'s codes fill ${plural(view.pages, 'page')}; there is no page ${page}.` };
  return { kind: 'page', gatewayId: parts.gatewayId, now: parts.now(), codes: view };
}

function resolveConflict(parts: GatewayStatusParts, id: number, choice: ConflictChoice, actor: string): ActionOutcome {
  const { store } = parts;
  if (!store.resolveConflict) return { kind: 'failed', message: 'Resolving conflicts is not available in this version of labgate.' };
  const done = store.resolveConflict(id, choice, actor);
  if (done.kind === 'not-found') return { kind: 'not-found', message: `There is no conflict ${id}.` };
  if (done.kind === 'already-resolved') return { kind: 'not-found', message: `Conflict ${id} is not open any more (someone may have resolved it already).` };
  for (const sink of done.queued) parts.wake?.(sink);
  if (choice === 'keep') return { kind: 'done', message: `Conflict ${id}: stored version kept.` };
  if (done.queued.length === 0) return { kind: 'done', message: `Conflict ${id}: resolved; no sink needed the correction (a QC result is never sent).` };
  return { kind: 'done', message: `Conflict ${id}: forwarded to ${done.queued.join(' and ')} as a correction.` };
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
  // A copy: the shared counts are not this snapshot's to extend.
  const counts = [...(store.outboxCounts?.current() ?? store.outbox.counts())];
  const dispatches = store.orders?.dispatchCounts();
  // Refused dispatches are listed (and counted) whether or not an instrument is two-way now.
  const dead = counts.reduce((n, c) => n + c.dead, 0) + (dispatches?.dead ?? 0);
  if (dispatches && parts.twoWay?.size) counts.push(dispatches);
  for (const sink of drains.keys()) {
    if (!counts.some((c) => c.sink === sink)) counts.push({ sink, pending: 0, sent: 0, dead: 0, conflict: 0, oldestPendingAt: null });
  }
  const figures = store.instrumentFigures ? new Map(store.instrumentFigures(daily.day(now)).map((f) => [f.instrumentId, f])) : null;
  const orders = parts.twoWay?.size && store.orders ? new Map(store.orders.figures(daily.day(now)).map((f) => [f.instrumentId, f.figures])) : null;
  const stored = store.recentResults(resultLimit);
  const delivery: Map<string, { sink: string; state: DeliveryState }[]> = store.deliveryStates?.(stored) ?? new Map();
  const ports = parts.instruments();
  return {
    gatewayId: parts.gatewayId,
    now,
    instruments: ports.map((p) => {
      const today = daily.today(p, now, figures === null ? null : figures.get(p.instrument));
      return instrumentView(p, today, orders && parts.twoWay?.has(p.instrument) ? ordersToday(orders.get(p.instrument)) : undefined);
    }),
    ...(store.codesSeen ? { codesSeen: ports.flatMap((p) => codesOf(parts, p.instrument, 1) ?? []).filter((v) => v.total > 0) } : {}),
    ...day(
      parts,
      now,
      ports.map((p) => p.instrument),
      counts,
    ),
    ...reloadOf(parts),
    ...(parts.newPorts ? { newPorts: parts.newPorts().map(newPortCard) } : {}),
    sinks: counts.map((c) => sinkView(c, store.outbox.sentSince(c.sink, now - HOUR_MS), drains.get(c.sink))),
    recentResults: stored.map((r) => ({ ...storedFields(r), dedupKey: r.dedupKey, delivery: delivery.get(r.dedupKey) ?? [] })),
    deadLetters: [
      ...store.outbox.deadLetters({ all: true }, queueLimit).map((d) => {
        const result = store.resultOf?.({ dedupKey: d.dedupKey, outboxId: d.id });
        return {
          sink: d.sink,
          dedupKey: d.dedupKey,
          accession: result?.accession ?? null,
          loinc: result?.analyteLoinc ?? null,
          reason: d.reason ?? 'no reason recorded',
          attempts: d.attempts,
          failedAt: d.updatedAt,
        };
      }),
      ...(store.orders?.deadLetters.deadLetters({ all: true }, queueLimit) ?? []).map((d) => ({
        sink: d.sink,
        dedupKey: d.dedupKey,
        accession: d.accession,
        loinc: null,
        reason: d.reason ?? 'no reason recorded',
        attempts: d.attempts,
        failedAt: d.updatedAt,
      })),
    ],
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
    ...(store.queueCounts ? { queueTotals: { deadLetters: dead, ...store.queueCounts() } } : {}),
  };
}

// The day at a glance, when the store keeps hourly counters: one small indexed read of each, no scan of the results.
function day(parts: GatewayStatusParts, now: number, instruments: string[], counts: readonly { sink: string; pending: number }[]): Pick<StatusSnapshot, 'day'> {
  const { store } = parts;
  if (!store.instrumentHours || !store.sinkFigures) return {};
  const first = windowStart(now);
  return {
    day: dayView({
      now,
      instruments,
      hours: store.instrumentHours(first),
      sinks: counts.map((c) => ({ sink: c.sink, pending: c.pending })),
      delivered: store.sinkFigures.deliveredPerHour(first),
      backlog: store.sinkFigures.backlogSince((first - 1) * HOUR_MS),
      ...(parts.hourLabel ? { hourLabel: parts.hourLabel } : {}),
    }),
  };
}

function newPortCard(p: PortStatus): NewPortCard {
  return { path: p.endpoint, found: p.detection?.state === 'found', summary: p.detection?.summary ?? p.reason ?? '', note: p.detection?.note ?? null };
}

function reloadOf(parts: GatewayStatusParts): Pick<StatusSnapshot, 'reload'> {
  const reload = parts.reload?.() ?? null;
  if (reload === null) return {};
  if (reload.problems.length <= PROBLEMS_LISTED) return { reload };
  return { reload: { ...reload, problems: reload.problems.slice(0, PROBLEMS_LISTED), problemCount: reload.problems.length } };
}
