// The gateway's delivery part: the sinks and one drain each, then two-way's orders client and dispatch drain, with
// one LIMS token for all of them. Started after the store, stopped before it: drains first, then the sinks' pools.
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import type { Sink } from '../delivery/contract.js';
import type { Drain } from '../delivery/drain.js';
import { createDrains } from '../delivery/drains.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import { sinkLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { steadyClock } from '../store/steady-time.js';
import type { Store } from '../store/store.js';
import { recordDeliveryMetrics } from './delivery-metrics.js';
import type { Part } from './lifecycle.js';
import { buildSinks } from './sinks.js';
import { limsTokens, startTwoWay, type TwoWay } from './two-way.js';

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
  private lims: ReturnType<typeof limsTokens>;

  constructor(private readonly deps: DeliveryDeps) {}

  start(): void {
    const { deps } = this;
    const config = deps.config();
    const store = deps.store();
    this.lims = limsTokens(config, deps.clock.now, () => deps.metrics.answerOverCap('lims-token'));
    const overCap = (upstream: string): void => deps.metrics.answerOverCap(upstream);
    this.sinks = deps.sinks ?? buildSinks(config, { log: deps.log, now: deps.clock.now, overCap, ...(this.lims ? { limsTokens: this.lims.tokens } : {}) });
    const drains = createDrains(this.sinks, {
      config,
      outbox: store.outbox,
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
    this.twoWay = startTwoWay(config, { store, tokens: this.lims?.tokens, clock: deps.clock, random: deps.random, log: deps.log, metrics: deps.metrics });
  }

  async stop(): Promise<void> {
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
}
