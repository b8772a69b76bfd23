import { describe, expect, test } from 'vitest';
import { initialMllpState, mllpStep, type MllpEffect } from '../../drivers/hl7/mllp.js';
import { bytes } from './mnemonic.js';

const run = (chunks: string[], max = 1024): MllpEffect[] => {
  let state = initialMllpState;
  const out: MllpEffect[] = [];
  for (const c of chunks) {
    const step = mllpStep(state, bytes(c), max);
    state = step.state;
    out.push(...step.effects);
  }
  return out;
};
const messages = (effects: MllpEffect[]): string[] => effects.flatMap((e) => (e.kind === 'message' ? [e.raw.toString('latin1')] : []));

describe('MLLP framing', () => {
  test.each([
    { name: 'one block', chunks: ['<VT>MSH|A<CR><FS><CR>'], want: ['MSH|A\r'] },
    { name: 'split anywhere', chunks: ['<VT>MS', 'H|A<CR>', '<FS>', '<CR>'], want: ['MSH|A\r'] },
    { name: 'several in one chunk', chunks: ['<VT>M1<FS><CR><VT>M2<FS><CR><VT>M3'], want: ['M1', 'M2'] },
    { name: 'FS without CR still ends the block', chunks: ['<VT>M1<FS><VT>M2<FS><CR>'], want: ['M1', 'M2'] },
    { name: 'NULs and noise between blocks are skipped', chunks: ['<NUL><NUL>junk<VT>M1<FS><CR><LF><NUL>x<VT>M2<FS><CR>'], want: ['M1', 'M2'] },
  ])('$name', ({ chunks, want }) => {
    expect(messages(run(chunks))).toEqual(want);
  });

  test('noise is reported, the CR trailer is not', () => {
    expect(run(['<VT>M1<FS><CR>', '<CR>', 'ab<VT>M2<FS><CR>']).filter((e) => e.kind === 'noise')).toEqual([
      { kind: 'noise', count: 1 },
      { kind: 'noise', count: 2 },
    ]);
  });

  test('a VT inside a block restarts: the cut-short block is reported, not delivered', () => {
    const effects = run(['<VT>partial<VT>M2<FS><CR>']);
    expect(effects).toEqual([{ kind: 'truncated', length: 7 }, expect.objectContaining({ kind: 'message' })]);
    expect(messages(effects)).toEqual(['M2']);
  });

  test('an empty block is a keep-alive', () => {
    expect(run(['<VT><FS><CR>'])).toEqual([{ kind: 'noise', count: 2 }]);
  });

  test('a block over the cap is refused with its head and never buffered whole; the next one is fine', () => {
    const big = 'MSH|^~\\&|' + 'x'.repeat(5000);
    let state = initialMllpState;
    const effects: MllpEffect[] = [];
    for (const piece of ['<VT>', ...big.match(/.{1,100}/g)!, '<FS><CR><VT>OK<FS><CR>']) {
      const step = mllpStep(state, bytes(piece), 2048);
      state = step.state;
      effects.push(...step.effects);
      if (state.phase === 'block') expect(state.length).toBeLessThanOrEqual(2048);
      if (state.phase === 'oversize') expect(state.head.length).toBeLessThanOrEqual(1024);
    }
    expect(effects[0]).toMatchObject({ kind: 'oversize', length: big.length });
    expect((effects[0] as { head: Buffer }).head.toString('latin1').startsWith('MSH|^~\\&|xxx')).toBe(true);
    expect(messages(effects)).toEqual(['OK']);
  });
});
