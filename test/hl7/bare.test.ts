// Bare framing (framing: none): messages split at each segment that starts with MSH, whatever the chunking, bounded.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { bareFlush, bareStep, initialBareState, type BareEffect } from '../../drivers/hl7/bare.js';
import { hematology25, lri251, mindrayBs } from './fixtures.js';

function split(chunks: Buffer[], maxBytes = 1 << 20): BareEffect[] {
  let state = initialBareState;
  const out: BareEffect[] = [];
  for (const chunk of chunks) {
    const step = bareStep(state, chunk, maxBytes);
    state = step.state;
    out.push(...step.effects);
  }
  return [...out, ...bareFlush(state).effects];
}

const payloads = [mindrayBs.payload, hematology25.payload, lri251.payload];
const stream = Buffer.from(payloads.join(''), 'latin1');

describe('bare framing', () => {
  test('any chunking gives the same messages, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: stream.length }), { maxLength: 12 }), (cuts) => {
        const at = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks = [0, ...at].map((from, i) => stream.subarray(from, at[i] ?? stream.length)).filter((c) => c.length > 0);
        expect(split(chunks)).toEqual(payloads.map((p) => ({ kind: 'message', raw: Buffer.from(p, 'latin1') })));
      }),
    );
  });

  test('MSH inside a field is not a new message; bytes before the first MSH come out as their own block', () => {
    const text = 'noise\r' + mindrayBs.payload.replace('PID|1|', 'PID|1|xMSH|');
    expect(split([Buffer.from(text, 'latin1')]).map((e) => (e.kind === 'message' ? e.raw.toString('latin1') : e.kind))).toEqual([
      'noise\r',
      mindrayBs.payload.replace('PID|1|', 'PID|1|xMSH|'),
    ]);
  });

  test('a message past the cap is refused with its length and its head, and memory holds no more than the cap', () => {
    const big = 'MSH|^~\\&|A\r' + 'OBX|1|ST|X||' + 'y'.repeat(5000) + '\r';
    let state = initialBareState;
    const effects: BareEffect[] = [];
    for (const c of [big, mindrayBs.payload].join('').match(/[\s\S]{1,100}/g)!) {
      const step = bareStep(state, Buffer.from(c, 'latin1'), 2048);
      state = step.state;
      effects.push(...step.effects);
      expect(state.length).toBeLessThanOrEqual(2048);
    }
    effects.push(...bareFlush(state).effects);
    expect(effects.map((e) => (e.kind === 'oversize' ? ['oversize', e.length, e.head.toString('latin1', 0, 10)] : ['message', e.raw.length]))).toEqual([
      ['oversize', big.length, 'MSH|^~\\&|A'],
      ['message', mindrayBs.payload.length],
    ]);
  });
});
