// A printer never resends: a report the runner cannot hold (more waiting than maxPendingReports, or still waiting when
// the gateway stops) is lost, and then counted, logged and shown as lost on the status page, /healthz and /metrics.
import { describe, expect, test } from 'vitest';
import { createLineRunner } from '../../drivers/line/runner.js';
import { Metrics } from '../../src/metrics.js';
import type { DriverEvent } from '../../src/runner-contract.js';
import { PortSupervisor } from '../../src/transport/supervisor.js';
import { evaluateHealth } from '../../src/web/health.js';
import { instrumentLamp } from '../../src/web/status/format.js';
import { instrumentsSection } from '../../src/web/status/render-status.js';
import { silentLog } from '../../src/log.js';
import { makeContext, settle } from '../hl7/context.js';
import { bytes } from '../hl7/mnemonic.js';
import { instrument } from '../web/fake-source.js';
import { loadLayout, spotchemReport } from './layouts.js';

const lost = (events: DriverEvent[]): string[] => events.flatMap((e) => (e.kind === 'lost' ? [e.reason] : []));

describe('a report that cannot be held', () => {
  test('past maxPendingReports the oldest waiting report is lost, counted as lost', async () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const h = makeContext(profile);
    createLineRunner(h.ctx, { ...options, maxPendingReports: 2 }).start();
    h.setAccepting(false);
    for (const id of ['A1', 'A2', 'A3', 'A4']) h.transport.emitData(bytes(spotchemReport.replace('24K0231', id)));
    await settle();
    expect(lost(h.events)).toEqual(['more than 2 reports waiting for the store', 'more than 2 reports waiting for the store']);
  });

  test('reports still waiting when the gateway stops are lost, counted as lost', async () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const h = makeContext(profile);
    const runner = createLineRunner(h.ctx, options);
    runner.start();
    h.setAccepting(false);
    h.transport.emitData(bytes(spotchemReport));
    await runner.stop();
    expect(lost(h.events)).toEqual(['not committed when the gateway stopped']);
    expect(h.logs.some((l) => l.includes('line reports not committed at stop: lost'))).toBe(true);
  });

  test('the instrument shows it: its status, /healthz, /metrics and its card on the status page', async () => {
    const clock = { now: () => 0, monotonic: () => 0, setTimeout: () => 0, clearTimeout: () => {} };
    const supervisor = new PortSupervisor({
      instrument: 'spotchem',
      endpoint: 'tcp://x',
      open: async () => {
        throw new Error('unused');
      },
      attach: () => ({ stop: async () => {} }),
      clock,
      log: silentLog,
      random: () => 0.5,
    });
    const metrics = new Metrics({ now: () => 0 });
    for (let i = 0; i < 2; i++) {
      supervisor.recordEvent({ kind: 'lost', reason: 'x' });
      metrics.driverEvent('spotchem', { kind: 'lost', reason: 'x' });
    }
    const status = supervisor.snapshot();
    expect(status.lostMessages).toBe(2);
    const health = evaluateHealth(
      { ready: true, store: { writable: true }, instruments: [{ ...status, state: 'connected' }], sinks: [] },
      { backlog: 10, oldestAgeMinutes: 10 },
    );
    expect(health.status).toBe('degraded');
    expect(health.reasons).toEqual([expect.stringMatching(/^instrument spotchem: 2 messages lost since start/)]);
    expect(await metrics.registry.metrics()).toMatch(/^labgate_lost_messages_total\{instrument="spotchem"\} 2$/m);
    const card = instrumentsSection({
      gatewayId: 'g',
      now: 0,
      sinks: [],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
      instruments: [instrument('spotchem', { lostMessages: 2 })],
    }).value;
    expect(card).toMatch(/<dt>Lost reports<\/dt><dd>2<\/dd>/);
    expect(instrumentLamp(instrument('spotchem', { lostMessages: 2 }))).toBe('amber');
  });
});
