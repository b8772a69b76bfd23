// The limit on what an instrument sending only rejected messages may journal a minute: the pure count, then an HL7
// runner over it (refused with AR beyond the limit, counted, logged with counts only, reset by an accepted message).
import { describe, expect, it } from 'vitest';
import { createHl7Runner } from '../drivers/hl7/runner.js';
import { LIMIT_WINDOW_MS, RejectedLimit, verdictOf, type LimitDecision, type Verdict } from '../src/rejected-limit.js';
import { makeContext, settle } from './hl7/context.js';
import { mindrayBs } from './hl7/fixtures.js';
import { mllp } from './hl7/mnemonic.js';

const journal = (refusedBefore = 0): LimitDecision => ({ kind: 'journal', refusedBefore });
const refuse = (first: boolean, journaled: number): LimitDecision => ({ kind: 'refuse', first, journaled });

describe('RejectedLimit', () => {
  it.each<{ name: string; steps: [at: number, verdict: Verdict, bytes: number][]; expected: LimitDecision[] }>([
    {
      name: 'three rejected a minute: the fourth and fifth are refused, the next minute starts again and says so',
      steps: [
        [0, 'rejected', 10],
        [1, 'rejected', 10],
        [2, 'rejected', 10],
        [3, 'rejected', 10],
        [4, 'rejected', 10],
        [LIMIT_WINDOW_MS, 'rejected', 10],
      ],
      expected: [journal(), journal(), journal(), refuse(true, 3), refuse(false, 3), journal(2)],
    },
    {
      name: 'bytes: past 100 a minute refused, but a first message larger than the limit is journaled',
      steps: [
        [0, 'rejected', 500],
        [1, 'rejected', 1],
        [LIMIT_WINDOW_MS, 'rejected', 60],
        [LIMIT_WINDOW_MS + 1, 'rejected', 40],
        [LIMIT_WINDOW_MS + 2, 'rejected', 1],
      ],
      expected: [journal(), refuse(true, 1), journal(1), journal(), refuse(true, 2)],
    },
    {
      name: 'an accepted message resets the count at once, and says how many were refused before it',
      steps: [
        [0, 'rejected', 10],
        [1, 'rejected', 10],
        [2, 'rejected', 10],
        [3, 'rejected', 10],
        [4, 'accepted', 10],
        [5, 'rejected', 10],
        [6, 'rejected', 10],
        [7, 'rejected', 10],
      ],
      expected: [journal(), journal(), journal(), refuse(true, 3), journal(1), journal(), journal(), journal()],
    },
    {
      name: 'a message with neither result nor rejection neither counts nor resets',
      steps: [
        [0, 'rejected', 10],
        [1, 'neither', 10],
        [2, 'neither', 10],
        [3, 'rejected', 10],
        [4, 'rejected', 10],
        [5, 'rejected', 10],
        [6, 'neither', 10],
      ],
      expected: [journal(), journal(), journal(), journal(), journal(), refuse(true, 3), journal()],
    },
  ])('$name', ({ steps, expected }) => {
    const limit = new RejectedLimit({ messagesPerMinute: 3, bytesPerMinute: 100 });
    expect(steps.map(([at, verdict, bytes]) => limit.next(at, verdict, bytes))).toEqual(expected);
  });

  it('an instrument that also sends good messages is never refused, whatever its share of rejected ones', () => {
    const limit = new RejectedLimit({ messagesPerMinute: 3, bytesPerMinute: 1_000 });
    const decisions = Array.from({ length: 1_000 }, (_, i) => limit.next(i, i % 3 === 2 ? 'accepted' : 'rejected', 10));
    expect(decisions.filter((d) => d.kind === 'refuse')).toEqual([]);
  });

  it('reads a message as accepted once it holds a result, rejected when it holds only rejections', () => {
    expect(verdictOf({ results: [{}], rejections: [{}] })).toBe('accepted');
    expect(verdictOf({ results: [], rejections: [{}] })).toBe('rejected');
    expect(verdictOf({ results: [], rejections: [] })).toBe('neither');
  });
});

describe('an HL7 runner over the limit', () => {
  /** A message with an MSH and nonsense after it: journaled as a rejected capture, as the decoder cannot read it. */
  const nonsense = (n: number): Buffer => mllp(`MSH|^~\\&|X|Y|||20260101||ORU^R01|J${n}|P|2.5\r%%${n}|Mrs Doe|secret ${'#'.repeat(200)}\r`);
  const good = mllp(mindrayBs.payload);
  const codes = (written: Buffer[]): string[] => written.map((w) => /MSA\|(A[AER])\|/.exec(w.toString('latin1'))?.[1] ?? '?');

  it('refuses rejected messages past the limit with AR, counts them, logs counts only, and journals again after an accepted one', async () => {
    const h = makeContext(mindrayBs.profile);
    h.ctx.rejectedLimit = { limit: new RejectedLimit({ messagesPerMinute: 5, bytesPerMinute: 1 << 20 }), messagesPerMinute: 5, mbPerMinute: 1 };
    createHl7Runner(h.ctx, mindrayBs.options).start();
    for (let i = 0; i < 8; i++) {
      h.transport.emitData(nonsense(i));
      await settle();
    }
    expect(codes(h.transport.written)).toEqual(['AE', 'AE', 'AE', 'AE', 'AE', 'AR', 'AR', 'AR']);
    expect(h.ingest.messages).toHaveLength(5);
    expect(h.events.filter((e) => e.kind === 'over-limit')).toHaveLength(3);
    expect(h.events.filter((e) => e.kind === 'commit-failed')).toEqual([]);

    // A good message is journaled and accepted, and the instrument may journal rejected ones again.
    h.transport.emitData(good);
    await settle();
    h.transport.emitData(nonsense(9));
    await settle();
    expect(codes(h.transport.written).slice(8)).toEqual(['AA', 'AE']);
    expect(h.ingest.messages).toHaveLength(7);

    const lines = h.logs.filter((l) => l.includes('over the limit'));
    expect(lines).toEqual([
      'warn only rejected messages, over the limit: refused for the rest of the minute {"journaled":5,"messagesPerMinute":5,"mbPerMinute":1}',
      'warn rejected messages over the limit were refused in the minute before {"refused":3}',
    ]);
    expect(h.logs.join('\n')).not.toMatch(/Doe|secret/);
  });
});
