// The gateway's delivery part: the sinks and one drain each, then two-way's orders client and dispatch drain, with
// one LIMS token for all of them. Started after the store, stopped before it: drains first, then the sinks' pools.
// The sinks' modules (pg, undici: a third of a cold start's CPU) are loaded once the instruments listen: an analyzer's
// first message after a power cut waits for the store only, and its rows wait in the outbox until the drains run.
// Two-way instruments are the exception: their first query needs the orders client, so they start after it.
import type { Agent } from 'undici';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { twoWayInstruments } from '../config/two-way-checks.js';
import type { Sink } from '../delivery/contract.js';
import type { Drain } from '../delivery/drain.js';
import { createDrains } from '../delivery/drains.js';
import { OutcomeMarks } from '../delivery/outcome-marks.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import { sinkLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { steadyClock } from '../store/steady-time.js';
import type { TokenProvider } from '../sinks/lims-token.js';
import type { Store } from '../store/store.js';
import { recordDeliveryMetrics } from './delivery-metrics.js';
import type { Part } from './lifecycle.js';
import { buildSinks, limsTokens } from './sinks.js';
import type { TwoWay } from './two-way.js';

/** What the delivery part is given by the gateway. */
export interface DeliveryDeps {
  config: () => Config;
  store: () => Store;
  clock: Clock;
  random: () => number;
  log: Logger;
  metrics: Metrics;
  /** Sinks to use instead of building them from the configuration (the demo's embedded PostgreSQL). */
  sinks?: Sink[];
  /** After each batch's outcomes are recorded (the page's and the sampler's caches go stale). */
  onOutcomes: () => void;
}

/** The sinks, their drains and two-way, as one part of the gateway's lifecycle. */
export class DeliveryPart implements Part {
  readonly name = 'delivery';
  drains: Drain[] = [];
  sinks: Sink[] = [];
  /** Query and download modes' orders client and dispatch drain, when an instrument is two-way. */
  twoWay: TwoWay | undefined;
  private lims: { tokens: TokenProvider; agent: Pick<Agent, 'close'> } | undefined;
  private loading: Promise<void> | undefined;

  constructor(private readonly deps: DeliveryDeps) {}

  /** Starts the drains at once when a two-way instrument needs the orders client; else running() starts them. */
  start(): Promise<void> | void {
    if (twoWayInstruments(this.deps.config()).size > 0) return this.running();
  }

  /** Loads the sinks and starts every drain (once); the gateway is ready when this resolves. */
  running(): Promise<void> {
    this.loading ??= this.load();
    return this.loading;
  }

  async stop(): Promise<void> {
    await this.loading?.catch(() => {});
    await Promise.allSettled(this.drains.map((d) => d.stop()));
    await this.twoWay?.stop();
    await Promise.allSettled(this.sinks.map((s) => s.close()));
    await this.lims?.agent.close();
  }

  /** Every drain, the dispatch drain of two-way included (the page's status, a wake after an operator's retry). */
  allDrains(): Drain[] {
    return this.twoWay ? [...this.drains, this.twoWay.drain] : this.drains;
  }

  /** The dispatch drain's health beside the sinks', when two-way runs. */
  withTwoWay(results: SinkHealth[], now: number): SinkHealth[] {
    return this.twoWay ? [...results, this.twoWay.health(now)] : results;
  }

  private async load(): Promise<void> {
    const { deps } = this;
    const config = deps.config();
    const store = deps.store();
    const { clock } = deps;
    this.lims = await limsTokens(config, clock, () => deps.metrics.answerOverCap('lims-token'));
    const overCap = (upstream: string): void => deps.metrics.answerOverCap(upstream);
    const tokens = this.lims ? { limsTokens: this.lims.tokens } : {};
    const times = { now: () => clock.now(), monotonic: () => clock.monotonic() };
    this.sinks = deps.sinks ?? (await buildSinks(config, { log: deps.log, ...times, overCap, ...tokens }));
    const drains = createDrains(this.sinks, {
      config,
      // Every sink's outcome marks written together (outcome-marks.ts).
      outbox: new OutcomeMarks(store.outbox, deps.clock),
      clock: steadyClock(deps.clock, store.steady),
      random: deps.random,
      log: (sink) => sinkLogger(deps.log, sink),
      onOutcomes: (sink) => (rows, outcomes, now) => {
        recordDeliveryMetrics(deps.metrics, sink, rows, outcomes, now);
        deps.onOutcomes();
      },
    });
    this.drains = [...drains.values()];
    for (const drain of this.drains) drain.start();
    if (twoWayInstruments(config).size === 0) return;
    const { startTwoWay } = await import('./two-way.js');
    this.twoWay = startTwoWay(config, { store, tokens: this.lims?.tokens, clock: deps.clock, random: deps.random, log: deps.log, metrics: deps.metrics });
  }
}
