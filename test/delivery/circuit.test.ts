import { describe, expect, it } from 'vitest';
import { admit, closedCircuit, judgeBatch, stepCircuit, type CircuitInput, type CircuitState } from '../../src/delivery/circuit.js';

const policy = { probeIntervalMs: 15_000 };
const open = (probeAt: number): CircuitState => ({ kind: 'open', probeAt, since: 1_000, reason: 'down' });
const down = (now: number, notBefore?: number): CircuitInput => ({ kind: 'sink-down', now, reason: 'down', ...(notBefore ? { notBefore } : {}) });

describe('circuit breaker', () => {
  it.each<{ name: string; from: CircuitState; input: CircuitInput; to: CircuitState }>([
    { name: 'closed → open on a sink-wide failure', from: closedCircuit, input: down(1_000), to: open(16_000) },
    { name: 'open → half-open when the probe is sent', from: open(16_000), input: { kind: 'probe-sent' }, to: { kind: 'half-open', since: 1_000, reason: 'down' } },
    { name: 'half-open → closed when the probe succeeds', from: { kind: 'half-open', since: 1_000, reason: 'down' }, input: { kind: 'batch-ok' }, to: closedCircuit },
    { name: 'half-open → open again when the probe fails', from: { kind: 'half-open', since: 1_000, reason: 'down' }, input: down(20_000), to: open(35_000) },
    { name: 'Retry-After beyond the probe interval is honored', from: closedCircuit, input: down(1_000, 100_000), to: open(100_000) },
    { name: 'closed stays closed on success', from: closedCircuit, input: { kind: 'batch-ok' }, to: closedCircuit },
    { name: 'a probe is not sent while closed', from: closedCircuit, input: { kind: 'probe-sent' }, to: closedCircuit },
  ])('$name', ({ from, input, to }) => {
    expect(stepCircuit(from, input, policy)).toEqual(to);
  });

  it('admits batches when closed, one probe when due, nothing while a probe is out', () => {
    expect(admit(closedCircuit, 0)).toEqual({ kind: 'batch' });
    expect(admit(open(16_000), 15_999)).toEqual({ kind: 'wait', until: 16_000 });
    expect(admit(open(16_000), 16_000)).toEqual({ kind: 'probe' });
    expect(admit({ kind: 'half-open', since: 0, reason: '' }, 99_999)).toEqual({ kind: 'wait', until: null });
  });

  it('judges a batch down when the sink says so or when every row of it failed', () => {
    const ok = { kind: 'delivered' } as const;
    const rec = { kind: 'retry', reason: 'r' } as const;
    const sink = { kind: 'retry', reason: 's', scope: 'sink', notBefore: 9_000 } as const;
    expect(judgeBatch([ok, rec], 5)).toEqual({ kind: 'batch-ok' });
    expect(judgeBatch([rec], 5)).toEqual({ kind: 'batch-ok' });
    expect(judgeBatch([rec, rec], 5)).toEqual({ kind: 'sink-down', now: 5, reason: 'r' });
    expect(judgeBatch([ok, sink], 5)).toEqual({ kind: 'sink-down', now: 5, reason: 's', notBefore: 9_000 });
    expect(judgeBatch([{ kind: 'dead', reason: 'x' }], 5)).toEqual({ kind: 'batch-ok' });
  });
});
