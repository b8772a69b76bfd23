// An in-memory StatusSource: a real implementation (not a mock) whose state tests change directly, with an
// audit log like the store's, so a test can see who did what and when.
import type {
  ActionOutcome,
  CodesPageOutcome,
  ConflictChoice,
  ConflictView,
  DayView,
  DeadLetterView,
  InstrumentCodesView,
  InstrumentView,
  RejectedCaptureView,
  ReloadView,
  ResultFields,
  ResultView,
  SinkView,
  StatusSnapshot,
  StatusSource,
} from '../../src/web/status/source.js';

/** One audited action. */
export interface AuditRecord {
  at: number;
  actor: string;
  action: string;
  subject: string;
}

/** A connected instrument with a few messages today. */
export function instrument(id: string, change: Partial<InstrumentView> = {}): InstrumentView {
  return {
    id,
    state: 'connected',
    reason: null,
    port: `/dev/serial/by-id/usb-FTDI_${id}-if00-port0`,
    since: 0,
    lastByteAt: null,
    lastMessageAt: null,
    nextAttemptAt: null,
    messagesToday: 0,
    resultsToday: 0,
    naks: 0,
    checksumErrors: 0,
    rejected: 0,
    refusedConnections: 0,
    ...change,
  };
}

/** A sink that is delivering with nothing pending. */
export function sink(name: string, change: Partial<SinkView> = {}): SinkView {
  return {
    sink: name,
    pending: 0,
    oldestPendingAt: null,
    deliveredLastHour: 0,
    dead: 0,
    conflicts: 0,
    circuit: 'delivering',
    reason: null,
    nextProbeAt: null,
    etaSeconds: 0,
    ...change,
  };
}

/** A potassium result's clinical fields. */
export function fields(accession: string, change: Partial<ResultFields> = {}): ResultFields {
  return {
    accession,
    instrumentId: 'chem1',
    loinc: '2823-3',
    analyzerCode: 'K',
    valueText: '4.1',
    unit: 'mmol/L',
    flags: [],
    status: 'final',
    resultedAt: '2026-11-30T12:00:00+00:00',
    referenceRange: '3.5-5.1',
    qc: false,
    ...change,
  };
}

/** The in-memory source. Tests mutate `state` and read `audit`. */
export class FakeStatusSource implements StatusSource {
  readonly audit: AuditRecord[] = [];
  readonly state: {
    gatewayId: string;
    instruments: InstrumentView[];
    sinks: SinkView[];
    results: ResultView[];
    deadLetters: DeadLetterView[];
    conflicts: ConflictView[];
    rejectedCaptures: RejectedCaptureView[];
    day?: DayView;
    codesSeen?: InstrumentCodesView[];
    reload?: ReloadView;
  };

  constructor(private readonly now: () => number) {
    this.state = { gatewayId: 'gw-test', instruments: [], sinks: [], results: [], deadLetters: [], conflicts: [], rejectedCaptures: [] };
  }

  snapshot(): StatusSnapshot {
    const s = structuredClone(this.state);
    const sinks = s.sinks.map((k) => ({ ...k, dead: s.deadLetters.filter((d) => d.sink === k.sink).length }));
    const extra = { ...(s.day ? { day: s.day } : {}), ...(s.codesSeen ? { codesSeen: s.codesSeen } : {}), ...(s.reload ? { reload: s.reload } : {}) };
    return {
      gatewayId: s.gatewayId,
      now: this.now(),
      instruments: s.instruments,
      sinks,
      recentResults: s.results,
      deadLetters: s.deadLetters,
      conflicts: s.conflicts,
      rejectedCaptures: s.rejectedCaptures,
      ...extra,
    };
  }

  /** Adds a result, newest first, pending in every sink. */
  addResult(accession: string, change: Partial<ResultFields> = {}): ResultView {
    const result: ResultView = {
      ...fields(accession, change),
      dedupKey: `key-${accession}`,
      delivery: this.state.sinks.map((k) => ({ sink: k.sink, state: 'pending' as const })),
    };
    this.state.results.unshift(result);
    return result;
  }

  /** Marks a result's row in one sink. */
  setDelivery(dedupKey: string, sinkName: string, state: ResultView['delivery'][number]['state']): void {
    for (const r of this.state.results) if (r.dedupKey === dedupKey) r.delivery = r.delivery.map((d) => (d.sink === sinkName ? { ...d, state } : d));
  }

  retryDeadLetter(sinkName: string, which: { key: string } | 'all', actor: string): ActionOutcome {
    const chosen = this.state.deadLetters.filter((d) => d.sink === sinkName && (which === 'all' || d.dedupKey === which.key));
    if (chosen.length === 0) return { kind: 'not-found', message: 'No such dead letter (already retried?).' };
    this.state.deadLetters = this.state.deadLetters.filter((d) => !chosen.includes(d));
    for (const d of chosen) {
      this.record(actor, 'dead-letter-retry', d.dedupKey);
      this.setDelivery(d.dedupKey, sinkName, 'pending');
    }
    return { kind: 'done', message: `${chosen.length} dead letter${chosen.length === 1 ? '' : 's'} for ${sinkName} queued again.` };
  }

  resolveConflict(id: number, choice: ConflictChoice, actor: string): ActionOutcome {
    const conflict = this.state.conflicts.find((c) => c.id === id);
    if (!conflict) return { kind: 'not-found', message: `Conflict ${id} is already resolved.` };
    this.state.conflicts = this.state.conflicts.filter((c) => c !== conflict);
    this.record(actor, choice === 'keep' ? 'conflict-kept' : 'conflict-forwarded', String(id));
    return { kind: 'done', message: choice === 'keep' ? `Conflict ${id}: stored version kept.` : `Conflict ${id}: new version forwarded as a correction.` };
  }

  reprocessCapture(id: number, actor: string): ActionOutcome {
    const capture = this.state.rejectedCaptures.find((c) => c.id === id);
    if (!capture) return { kind: 'not-found', message: `Capture ${id} is not rejected.` };
    this.state.rejectedCaptures = this.state.rejectedCaptures.filter((c) => c !== capture);
    this.record(actor, 'reprocessed', `capture:${id}`);
    return { kind: 'done', message: `Capture ${id} reprocessed: accepted.` };
  }

  codes(instrumentId: string, page: number): CodesPageOutcome {
    const view = this.state.codesSeen?.find((c) => c.instrumentId === instrumentId && c.page === page);
    if (!view) return { kind: 'not-found', message: 'No such page of codes.' };
    return { kind: 'page', gatewayId: this.state.gatewayId, now: this.now(), codes: structuredClone(view) };
  }

  private record(actor: string, action: string, subject: string): void {
    this.audit.push({ at: this.now(), actor, action, subject });
  }
}
