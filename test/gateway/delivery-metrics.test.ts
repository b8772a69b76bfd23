import { describe, expect, it } from 'vitest';
import { recordDeliveryMetrics } from '../../src/gateway/delivery-metrics.js';
import { Metrics } from '../../src/metrics.js';
import type { OutboxRow } from '../../src/delivery/contract.js';

const row = (id: number, receivedAt: string): OutboxRow => ({
  id,
  sink: 'lims',
  dedupKey: `k${id}`,
  recordId: `r${id}`,
  attempts: 0,
  etag: null,
  payload: JSON.stringify({ dedupKey: `k${id}`, capture: { receivedAt, rawSha256: 'x' } }),
  payloadSha256: 'x',
});

describe('delivery metrics', () => {
  it('counts outcomes per kind and observes capture-to-confirmation latency of delivered rows only', async () => {
    const now = Date.parse('2026-07-01T14:30:10Z');
    const metrics = new Metrics({ now: () => now });
    const rows = [row(1, '2026-07-01T14:30:08.000Z'), row(2, '2026-07-01T14:30:00.000Z'), row(3, '2026-07-01T14:29:00.000Z')];
    recordDeliveryMetrics(metrics, 'lims', rows, [{ kind: 'delivered' }, { kind: 'delivered' }, { kind: 'retry', reason: 'busy' }], now);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/labgate_sink_outcomes_total\{sink="lims",outcome="delivered"\} 2/);
    expect(text).toMatch(/labgate_sink_outcomes_total\{sink="lims",outcome="retry"\} 1/);
    expect(text).toMatch(/labgate_delivery_latency_seconds_count\{sink="lims"\} 2/);
    expect(text).toMatch(/labgate_delivery_latency_seconds_sum\{sink="lims"\} 12/);
  });
});
