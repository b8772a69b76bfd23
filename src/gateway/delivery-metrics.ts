// Feeds a drain's recorded outcomes into /metrics: counts per outcome and, for delivered rows, the latency from
// the capture's arrival to the sink's confirmation.
import type { Metrics } from '../metrics.js';
import type { OutboxRow, Outcome } from '../delivery/contract.js';

// The payload is JSON written by labgate itself; reading one field by pattern avoids parsing every payload on the
// drain's hot path.
const receivedAtPattern = /"receivedAt":"([^"]+)"/;

/** Records one batch's outcomes for `sink`. */
export function recordDeliveryMetrics(metrics: Metrics, sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[], now: number): void {
  const counts = { delivered: 0, retry: 0, conflict: 0, dead: 0 };
  const latencies: number[] = [];
  outcomes.forEach((outcome, i) => {
    counts[outcome.kind] += 1;
    if (outcome.kind !== 'delivered') return;
    const receivedAt = Date.parse(receivedAtPattern.exec(rows[i]?.payload ?? '')?.[1] ?? '');
    if (Number.isFinite(receivedAt)) latencies.push(Math.max(0, now - receivedAt));
  });
  for (const kind of ['delivered', 'retry', 'conflict', 'dead'] as const) {
    if (counts[kind] > 0) metrics.delivery(sink, kind, counts[kind], kind === 'delivered' ? latencies : []);
  }
}
