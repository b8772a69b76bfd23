// One drain per sink: claims due outbox rows in batches, hands them to the sink, records every outcome in one
// transaction per batch. Drains share nothing, so one sink's outage never delays another. Event-driven: it wakes
// on notify() (new rows committed) and on one timer set to the next due or probe time; idle, it arms nothing.
// Busy, it keeps the sink busy: one batch is claimed ahead, and a finished batch is recorded after the next one is out.
import { wallTimeOf, type Clock } from '../clock.js';
import type { OutboxRow, Outcome, Sink } from './contract.js';
import type { Outbox } from '../store/outbox.js';
import { retryTimes, type BackoffPolicy } from './backoff.js';
import { admit, closedCircuit, judgeBatch, stepCircuit, type CircuitPolicy, type CircuitState } from './circuit.js';
import { DeliveryRate } from './rate.js';
import { silentLog, type Log } from '../log.js';

/** The part of the store a drain uses; recording may complete later (outcome-marks.ts writes several batches at once). */
export interface DrainOutbox extends Pick<Outbox, 'claimDue' | 'release' | 'nextDueAt'> {
  recordOutcomes(sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[], retryAt: readonly (number | null)[]): void | Promise<void>;
}

/** How a drain paces itself (from the `delivery` and sink sections of the configuration). */
export interface DrainPolicy extends CircuitPolicy {
  backoff: BackoffPolicy;
  batchSize: number;
  /** Batches in flight at once. */
  inFlight: number;
}

/** Everything a drain needs, injected. */
export interface DrainOptions {
  sink: Sink;
  outbox: DrainOutbox;
  policy: DrainPolicy;
  /** Due times, probes and retries run on its monotonic reading, which must be the outbox's steady time. */
  clock: Clock;
  random: () => number;
  log?: Log;
  /** Called with every batch's outcomes once they are recorded (metrics), with the wall time. */
  onOutcomes?: (rows: readonly OutboxRow[], outcomes: readonly Outcome[], now: number) => void;
}

/** A drain's state for /healthz, /metrics and the status page. */
export interface DrainStatus {
  sink: string;
  circuit: CircuitState['kind'];
  /** When a paused sink is probed next (epoch ms), or null. */
  nextProbeAt: number | null;
  pausedSince: number | null;
  lastError: string | null;
  delivered: number;
  deadLettered: number;
  conflicts: number;
  /** Results delivered per second over the last minute. */
  recentRate: number;
  batchesInFlight: number;
}

const silent = silentLog;

/** Delivers one sink's outbox. */
export class Drain {
  private circuit: CircuitState = closedCircuit;
  private running = false;
  private timer: { handle: unknown; at: number } | null = null;
  private pumpQueued = false;
  private readonly batches = new Set<Promise<void>>();
  /** Batches the sink is working on (the in-flight bound); a batch being recorded no longer counts. */
  private sending = 0;
  /** The next batch, claimed while the sink was busy so that it goes out the moment the sink is free. */
  private ahead: OutboxRow[] | null = null;
  private abort = new AbortController();
  private readonly rate: DeliveryRate;
  private readonly counters = { delivered: 0, dead: 0, conflicts: 0 };
  private lastError: string | null = null;
  private readonly log: Log;

  constructor(private readonly options: DrainOptions) {
    this.log = options.log ?? silent;
    this.rate = new DeliveryRate(60_000);
  }

  /** Begins delivering whatever is due. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.pump();
  }

  /** Stops claiming, aborts the sink's in-flight work and waits for every batch's outcome to be recorded. */
  async stop(): Promise<void> {
    this.running = false;
    this.disarm();
    this.abort.abort();
    while (this.batches.size > 0) await Promise.allSettled([...this.batches]);
    this.dropAhead();
  }

  /** New rows were committed for this sink: deliver them soon (coalesced; never on the caller's stack). */
  notify(): void {
    if (!this.running || this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** State for status and health. */
  status(): DrainStatus {
    const c = this.circuit;
    return {
      sink: this.options.sink.name,
      circuit: c.kind,
      nextProbeAt: c.kind === 'open' ? wallTimeOf(this.options.clock, c.probeAt) : null,
      pausedSince: c.kind === 'closed' ? null : wallTimeOf(this.options.clock, c.since),
      lastError: this.lastError,
      delivered: this.counters.delivered,
      deadLettered: this.counters.dead,
      conflicts: this.counters.conflicts,
      recentRate: this.rate.perSecond(this.options.clock.monotonic()),
      batchesInFlight: this.batches.size,
    };
  }

  private pump(): void {
    if (!this.running) return;
    this.disarm();
    const { outbox, sink, policy, clock } = this.options;
    // Rows claimed ahead for a healthy sink are not held through a pause: the probe takes one row, the rest wait as due.
    if (this.circuit.kind !== 'closed') this.dropAhead();
    while (this.sending < policy.inFlight) {
      const admission = admit(this.circuit, clock.monotonic());
      if (admission.kind === 'wait') break;
      const probe = admission.kind === 'probe';
      const rows = this.takeAhead() ?? outbox.claimDue(sink.name, probe ? 1 : policy.batchSize);
      if (rows.length === 0) break;
      if (probe) this.circuit = stepCircuit(this.circuit, { kind: 'probe-sent' }, policy);
      this.launch(rows, probe);
    }
    this.arm();
  }

  // While every batch the sink may take is out, the next one is claimed (a claim of 500 rows is a millisecond or two
  // of SQLite), so that a finished batch is followed at once rather than after a claim. Only for a closed circuit.
  private claimAhead(): void {
    const { outbox, sink, policy } = this.options;
    if (!this.running || this.ahead !== null || this.circuit.kind !== 'closed' || this.sending < policy.inFlight) return;
    const rows = outbox.claimDue(sink.name, policy.batchSize);
    if (rows.length > 0) this.ahead = rows;
  }

  private takeAhead(): OutboxRow[] | null {
    const rows = this.ahead;
    this.ahead = null;
    return rows;
  }

  private dropAhead(): void {
    const rows = this.takeAhead();
    if (rows !== null) this.options.outbox.release(this.options.sink.name, rows);
  }

  // One timer at most: the probe time while paused, else the next due row; none while batches are
  // in flight at the limit (their completion pumps) or while nothing is pending.
  private arm(): void {
    const { outbox, sink, policy, clock } = this.options;
    if (this.circuit.kind === 'half-open' || this.sending >= policy.inFlight) return;
    const due = outbox.nextDueAt(sink.name);
    if (due === null) return;
    const at = this.circuit.kind === 'open' ? Math.max(due, this.circuit.probeAt) : due;
    const delay = Math.max(at - clock.monotonic(), 1);
    this.timer = {
      at,
      handle: clock.setTimeout(() => {
        this.timer = null;
        this.pump();
      }, delay),
    };
  }

  private disarm(): void {
    if (this.timer) this.options.clock.clearTimeout(this.timer.handle);
    this.timer = null;
  }

  private launch(rows: OutboxRow[], probe: boolean): void {
    const batch = this.deliver(rows, probe).finally(() => {
      this.batches.delete(batch);
      this.pump();
    });
    this.batches.add(batch);
  }

  private async deliver(rows: OutboxRow[], probe: boolean): Promise<void> {
    this.sending++;
    let outcomes: Outcome[];
    try {
      outcomes = await this.ask(rows);
    } finally {
      this.sending--;
    }
    const { clock } = this.options;
    const now = clock.monotonic();
    outcomes = onSteadyTime(outcomes, now - clock.now());
    this.judge(outcomes, now, probe);
    const retryAt = retryTimes(rows, outcomes, this.circuit.kind !== 'closed', now, this.options.policy.backoff, this.options.random);
    // The sink is free again: hand it the next batch before spending time on this one's bookkeeping. A sink writes
    // to its socket a tick later (pg's pool does), so let that happen, and any other batch's answer waiting in the
    // event loop be taken, before the synchronous recording holds the thread for a few milliseconds.
    this.pump();
    await yieldToEventLoop();
    // The batch after it is claimed now, while the sink works: outcome marks may wait for others (outcome-marks.ts)
    // for up to a tenth of a second, and a claim made only after them would sit on the next batch's path instead.
    this.claimAhead();
    try {
      await this.options.outbox.recordOutcomes(this.options.sink.name, rows, outcomes, retryAt);
    } catch (err) {
      // The store refused (disk full, I/O error): the rows stay pending, and the drain pauses like for a down sink
      // rather than re-sending the same batch in a tight loop (the sink absorbs the re-delivery later).
      this.options.outbox.release(this.options.sink.name, rows);
      this.log.error({ err, sink: this.options.sink.name }, 'recording delivery outcomes failed');
      const reason = `store: ${(err as Error).message}`;
      this.lastError = reason;
      this.circuit = stepCircuit(this.circuit, { kind: 'down', now, reason }, this.options.policy);
      return;
    }
    this.observe(outcomes, now);
    this.options.onOutcomes?.(rows, outcomes, clock.now());
    this.claimAhead();
  }

  // A sink that throws or answers with the wrong number of outcomes has a bug; treat it as down, never as data.
  private async ask(rows: OutboxRow[]): Promise<Outcome[]> {
    try {
      const outcomes = await this.options.sink.deliver(rows, this.abort.signal);
      if (outcomes.length === rows.length) return outcomes;
      throw new Error(`sink returned ${outcomes.length} outcomes for ${rows.length} rows`);
    } catch (err) {
      this.log.error({ err, sink: this.options.sink.name }, 'sink failed instead of returning outcomes');
      return rows.map(() => ({ kind: 'retry', reason: `sink error: ${(err as Error).message}`, scope: 'unreachable' }));
    }
  }

  private observe(outcomes: readonly Outcome[], now: number): void {
    let delivered = 0;
    for (const o of outcomes) {
      if (o.kind === 'delivered') delivered++;
      else if (o.kind === 'dead') this.counters.dead++;
      else if (o.kind === 'conflict') this.counters.conflicts++;
      else this.lastError = o.reason;
    }
    this.counters.delivered += delivered;
    this.rate.add(now, delivered);
  }

  private judge(outcomes: readonly Outcome[], now: number, probe: boolean): void {
    const before = this.circuit.kind;
    this.circuit = judgeBatch(this.circuit, outcomes, now, this.options.policy, probe);
    if (before !== this.circuit.kind) this.log.warn({ sink: this.options.sink.name, circuit: this.circuit }, `circuit ${this.circuit.kind}`);
  }
}

// A sink names a Retry-After time on the wall clock; the drain waits it on the steady one (`shift` = steady - wall).
function onSteadyTime(outcomes: Outcome[], shift: number): Outcome[] {
  if (!outcomes.some((o) => o.kind === 'retry' && o.notBefore !== undefined)) return outcomes;
  return outcomes.map((o) => (o.kind === 'retry' && o.notBefore !== undefined ? { ...o, notBefore: o.notBefore + shift } : o));
}

// Resolves after pending I/O callbacks and ticks have run (setImmediate runs after the poll phase).
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
