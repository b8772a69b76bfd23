// The instruments as one part of the gateway whose members start and stop one at a time, so a configuration reload
// can add, remove or restart one instrument without touching the others (ARCHITECTURE.md invariant 7).
import type { ReloadPlan } from '../config/reload-plan.js';
import type { InstrumentConfig } from '../config/schema.js';
import type { Clock } from '../clock.js';
import type { InstrumentHandle } from './instruments.js';
import type { Part } from './lifecycle.js';

/** The running instruments, by id. */
export class InstrumentSet implements Part {
  readonly name = 'instruments';
  private readonly running = new Map<string, InstrumentHandle>();

  constructor(
    private readonly initial: () => readonly InstrumentConfig[],
    private readonly make: (instrument: InstrumentConfig) => InstrumentHandle,
  ) {}

  /** Starts every enabled instrument of the configuration. */
  start(): void {
    for (const instrument of this.initial()) if (instrument.enabled) this.add(instrument);
  }

  /** Starts one instrument; its id must not be running. */
  add(instrument: InstrumentConfig): InstrumentHandle {
    if (this.running.has(instrument.id)) throw new Error(`instrument ${instrument.id} is running already`);
    const handle = this.make(instrument);
    this.running.set(instrument.id, handle);
    handle.supervisor.start();
    return handle;
  }

  /** Stops one instrument: its session ends (an outcome the store owes arrives first), its port closes. */
  async remove(id: string): Promise<boolean> {
    const handle = this.running.get(id);
    if (handle === undefined) return false;
    this.running.delete(id);
    await stopped([handle]);
    return true;
  }

  /** Stops an instrument and starts it again with `instrument` (its new configuration). */
  async restart(instrument: InstrumentConfig): Promise<InstrumentHandle> {
    await this.remove(instrument.id);
    return this.add(instrument);
  }

  /**
   * Applies a reload's instrument changes: the removed and restarted ones stop (each as on unplug), `swap` makes the
   * new configuration the running one, then the restarted and added ones start. The others are not touched.
   */
  async apply(plan: Pick<ReloadPlan, 'added' | 'removed' | 'restarted'>, swap: () => void): Promise<void> {
    const restarted = plan.restarted.map((r) => r.instrument);
    await Promise.all([...plan.removed, ...restarted.map((i) => i.id)].map((id) => this.remove(id)));
    swap();
    for (const instrument of [...restarted, ...plan.added]) this.add(instrument);
  }

  /** Stops every instrument at once. */
  async stop(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    await stopped(all);
  }

  /** True once every instrument's first open has finished: its port connected, listening, or failed and waiting. */
  firstOpensDone(): boolean {
    return [...this.running.values()].every((h) => {
      const { state, reason } = h.supervisor.snapshot();
      return state !== 'waiting-for-device' || reason !== 'opening';
    });
  }

  /** Waits for the instruments' first opens (each a few milliseconds on libuv's thread pool), for at most `ms`. */
  async firstOpens(clock: Clock, ms: number): Promise<void> {
    const until = clock.monotonic() + ms;
    while (!this.firstOpensDone() && clock.monotonic() < until) await new Promise<void>((resolve) => clock.setTimeout(resolve, 5));
  }

  /** The running instruments, in the configuration's order (a restarted one keeps its place on the page). */
  handles(): InstrumentHandle[] {
    const order = new Map(this.initial().map((i, n) => [i.id, n]));
    return [...this.running.values()].sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity));
  }
}

// Sessions first (each finishes what it has in flight), then the ports, then the logs' pending summaries.
async function stopped(handles: readonly InstrumentHandle[]): Promise<void> {
  await Promise.allSettled(handles.map((h) => h.supervisor.stop()));
  await Promise.allSettled(handles.map((h) => h.endpoint.close()));
  for (const h of handles) h.log.flush();
}
