// prom-client's metric classes, each from its own file. prom-client's index also loads what labgate does not use
// (the Summary with its t-digest, the Pushgateway, the cluster aggregator) and every default collector with
// OpenTelemetry's API: 80 of the 88 files it loads, which a start after a power cut would read before an analyzer's
// first ACK.
// The default collectors are loaded when the process metrics are asked for (collectDefaultMetrics below).
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const load = createRequire(import.meta.url);

/** prom-client's Registry (lib/registry.js, the class its index exports). */
export const Registry = load('prom-client/lib/registry') as typeof PromClient.Registry;
export type Registry = PromClient.Registry;
/** prom-client's Counter (lib/counter.js). */
export const Counter = load('prom-client/lib/counter') as typeof PromClient.Counter;
export type Counter<T extends string = string> = PromClient.Counter<T>;
/** prom-client's Gauge (lib/gauge.js). */
export const Gauge = load('prom-client/lib/gauge') as typeof PromClient.Gauge;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
/** prom-client's Histogram (lib/histogram.js). */
export const Histogram = load('prom-client/lib/histogram') as typeof PromClient.Histogram;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;

/** prom-client's default collectors (process CPU and memory, event-loop lag, GC), loaded at the first call. */
export function collectDefaultMetrics(config: PromClient.DefaultMetricsCollectorConfiguration<PromClient.RegistryContentType>): void {
  (load('prom-client/lib/defaultMetrics') as typeof PromClient.collectDefaultMetrics)(config);
}
