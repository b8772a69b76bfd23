// One Drain per sink, paced from the configuration: the composition root's one call to set up delivery.
import type { Config } from '../config/schema.js';
import type { Clock } from '../clock.js';
import type { Sink } from './contract.js';
import { Drain, type DrainOptions, type DrainOutbox, type DrainPolicy } from './drain.js';
import type { Log } from '../log.js';

/** The pacing of one sink's drain: the `delivery` section plus the sink's own batch size. */
export function drainPolicy(config: Config, sink: string): DrainPolicy {
  const section = sink === 'postgres' || sink === 'lims' || sink === 'fhir' ? config.sinks[sink] : undefined;
  return {
    backoff: config.delivery.backoff,
    probeIntervalMs: config.delivery.probeIntervalMs,
    failureThreshold: config.delivery.failureThreshold,
    inFlight: config.delivery.inFlight,
    batchSize: section?.batchSize ?? 100,
  };
}

/** A drain per sink, keyed by sink name; start them after the store opens, stop them before it closes. */
export function createDrains(
  sinks: readonly Sink[],
  deps: {
    config: Config;
    outbox: DrainOutbox;
    clock: Clock;
    random: () => number;
    log?: (sink: string) => Log;
    onOutcomes?: (sink: string) => DrainOptions['onOutcomes'];
  },
): Map<string, Drain> {
  return new Map(
    sinks.map((sink) => [
      sink.name,
      new Drain({
        sink,
        outbox: deps.outbox,
        policy: drainPolicy(deps.config, sink.name),
        clock: deps.clock,
        random: deps.random,
        ...(deps.log ? { log: deps.log(sink.name) } : {}),
        ...(deps.onOutcomes ? { onOutcomes: deps.onOutcomes(sink.name) } : {}),
      }),
    ]),
  );
}
