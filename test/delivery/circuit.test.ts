import { describe, expect, it } from 'vitest';
import { admit, closedCircuit, judgeBatch, stepCircuit, type CircuitInput, type CircuitState } from '../../src/delivery/circuit.js';
import type { Outcome } from '../../src/delivery/contract.js';

const policy = { probeIntervalMs: 15_000, failureThreshold: 3 };
const open = (probeAt: number, since = 1_000): CircuitState => ({ kind: 'open', probeAt, since, reason: 'down' });
const closed = (failures: number): CircuitState => ({ kind: 'closed', failures });
const halfOpen: CircuitState = { kind: 'half-open', since: 1_000, reason: 'down' };
const failed = (now: number, notBefore?: number): CircuitInput => ({ kind: 'failed', now, reason: 'down', ...(notBefore ? { notBefore } : {}) });
const down = (now: number, notBefore?: number): CircuitInput => ({ kind: 'down', now, reason: 'down', ...(notBefore ? { notBefore } : {}) });
const answered: CircuitInput = { kind: 'answered' };

describe('circuit breaker', () => {
  it.each<{ name: string; from: CircuitState; input: CircuitInput; to: CircuitState }>([
    { name: 'one failure is counted, not an outage', from: closedCircuit, input: failed(1_000), to: closed(1) },
    { name: 'failures below the threshold keep it closed', from: closed(1), input: failed(1_000), to: closed(2) },
    { name: 'the threshold-th failure in a row opens it', from: closed(2), input: failed(1_000), to: open(16_000) },
    { name: 'an answer between failures starts the count again', from: closed(2), input: answered, to: closedCircuit },
    { name: 'a failed connect opens it at once', from: closedCircuit, input: down(1_000), to: open(16_000) },
    { name: 'open → half-open when the probe is sent', from: open(16_000), input: { kind: 'probe-sent' }, to: halfOpen },
    { name: 'half-open → closed when the probe is answered', from: halfOpen, input: answered, to: closedCircuit },
    { name: 'half-open → open again on one failed probe', from: halfOpen, input: failed(20_000), to: open(35_000) },
    { name: 'an answer from a batch sent before the pause closes it', from: open(16_000), input: answered, to: closedCircuit },
    { name: 'Retry-After sets the probe time, sooner than the interval', from: closed(2), input: failed(1_000, 4_000), to: open(4_000) },
    { name: 'Retry-After sets the probe time, later than the interval', from: closedCircuit, input: down(1_000, 100_000), to: open(100_000) },
    { name: 'a Retry-After of zero still waits a second', from: closed(2), input: failed(1_000, 1_000), to: open(2_000) },
    { name: 'a late failure while open keeps the pause start', from: open(16_000, 500), input: failed(3_000), to: open(18_000, 500) },
    { name: 'closed stays closed on success', from: closedCircuit, input: answered, to: closedCircuit },
    { name: 'a probe is not sent while closed', from: closedCircuit, input: { kind: 'probe-sent' }, to: closedCircuit },
  ])('$name', ({ from, input, to }) => {
    expect(stepCircuit(from, input, policy)).toEqual(to);
  });

  it('admits batches when closed, one probe when due, nothing while a probe is out', () => {
    expect(admit(closedCircuit, 0)).toEqual({ kind: 'batch' });
    expect(admit(closed(2), 0)).toEqual({ kind: 'batch' });
    expect(admit(open(16_000), 15_999)).toEqual({ kind: 'wait', until: 16_000 });
    expect(admit(open(16_000), 16_000)).toEqual({ kind: 'probe' });
    expect(admit(halfOpen, 99_999)).toEqual({ kind: 'wait', until: null });
  });

  describe('judging a batch row by row', () => {
    const ok: Outcome = { kind: 'delivered' };
    const rec: Outcome = { kind: 'retry', reason: 'r' };
    const sink: Outcome = { kind: 'retry', reason: 's', scope: 'sink' };
    const later: Outcome = { kind: 'retry', reason: '503', scope: 'sink', notBefore: 9_000 };
    const refused: Outcome = { kind: 'retry', reason: 'ECONNREFUSED', scope: 'unreachable' };
    const judge = (outcomes: Outcome[], from: CircuitState = closedCircuit, probe = false) => judgeBatch(from, outcomes, 5, policy, probe);
    const open = (probeAt: number, since = 5): CircuitState => ({ kind: 'open', probeAt, since, reason: expect.any(String) as string });

    it('isolated failures among answers never open it', () => {
      expect(judge([ok, sink, ok, sink, sink, ok, sink, ok])).toEqual(closedCircuit);
      expect(judge([ok, sink, sink])).toEqual(closed(2));
    });

    it('record-scoped retries say nothing: they neither count nor break a run', () => {
      expect(judge([rec, rec, rec, rec])).toEqual(closedCircuit);
      expect(judge([sink, rec, sink, rec])).toEqual(closed(2));
      expect(judge([sink, rec, sink, rec, sink])).toEqual(open(15_005));
    });

    it('a run reaching the threshold opens it, across batches too', () => {
      expect(judge([ok, sink, sink, sink, ok])).toEqual(closedCircuit); // opened, then an answer from the same batch closed it
      expect(judge([sink], closed(2))).toEqual(open(15_005));
      expect(judge([ok, sink, sink, later])).toEqual(open(9_000));
    });

    it('a refused connection opens it whatever came before', () => {
      expect(judge([ok, refused])).toEqual(open(15_005));
      expect(
        judge(
          [
            { kind: 'dead', reason: 'x' },
            { kind: 'conflict', reason: 'y' },
          ],
          closed(2),
        ),
      ).toEqual(closedCircuit);
    });

    it('a probe answered with a record-scoped retry (429) was taken by the sink: closed', () => {
      expect(judge([rec], halfOpen, true)).toEqual(closedCircuit);
      expect(judge([sink], halfOpen, true)).toEqual(open(15_005, 1_000));
      expect(judge([rec], halfOpen, false)).toEqual(halfOpen);
    });
  });
});
