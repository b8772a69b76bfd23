// `labgate decode` reads a capture with the instrument's configured framing, never a guessed one, and reports
// every transmission the gateway would have refused or discarded.
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { transportPair } from './pair.js';
import { options, profile } from './profile.js';

const p = profile([{ code: 'GLU', loinc: '2345-7', unit: 'mmol/L' }]);
const text = 'H|\\^&|||Emu<CR>P|1<CR>O|1|A1<CR>R|1|^^^GLU|5.4|mmol/L||N||F||||20260101120000<CR>L|1|N<CR>';
const decode = (wire: Buffer, o: AstmOptionsInput = {}) => decodeAstmCapture(wire, p, options(o));
const reasons = (wire: Buffer, o: AstmOptionsInput = {}): string[] => decode(wire, o).flatMap((m) => m.rejections.map((r) => r.reason));
/** The frame with its checksum replaced by a wrong one. */
const corrupt = (f: string): string => f.replace('<CS>', '00');

describe('a transmission refused for its checksums is reported', () => {
  it('NAKs then EOT with nothing complete: a rejected line in decode, a discarded event in run', () => {
    const wire = bytes('<ENQ>' + corrupt(frame(1, text)).repeat(3) + '<EOT>');
    expect(reasons(wire)).toEqual(['message discarded: EOT after 3 refused frame(s), no message complete (frame refused: checksum)']);
    const h = harness(p, options());
    h.transport.emitData(wire);
    expect(h.events.filter((e) => e.kind === 'discarded')).toEqual([{ kind: 'discarded', reason: 'EOT after 3 refused frame(s), no message complete' }]);
    expect(h.events.filter((e) => e.kind === 'checksum-error')).toHaveLength(3);
  });

  it('an analyzer that gives up after 7 refusals: reported once, its EOT adds nothing', async () => {
    const { analyzer, gateway } = transportPair();
    const h = harness(p, options(), gateway);
    const emulator = new AstmEmulator(analyzer, h.clock, { faults: { corruptChecksum: [0, 0, 0, 0, 0, 0, 0] } });
    const outcome = await h.clock.run(emulator.send([Buffer.from(bytes(text))]));
    expect(outcome.kind).toBe('aborted');
    expect(h.events.filter((e) => e.kind === 'discarded')).toEqual([{ kind: 'discarded', reason: '7 frames refused in a row' }]);
  });
});

describe('decode uses the configured framing', () => {
  const bare = bytes(text.replace(/<CR>/g, '\r\n').replace(/<([A-Z]+)>/g, ''));

  it('bare records read with framing link are not decoded: the bytes outside any frame are reported', () => {
    expect(decode(bare).flatMap((m) => m.results)).toEqual([]);
    expect(reasons(bare)).toEqual([`${bare.length - 10} bytes outside any frame ignored (the instrument's framing is link)`]);
  });

  it('the same records read with framing none are decoded', () => {
    expect(decode(bare, { framing: 'none' }).flatMap((m) => m.results.map((r) => r.valueText))).toEqual(['5.4']);
  });

  it('a capture cut in the middle of a frame yields nothing from the unverified part', () => {
    // Its STX was lost, and its checksum is wrong: never read as records.
    const cut = bytes(corrupt(frame(1, text)).replace('<STX>', ''));
    expect(decode(cut).flatMap((m) => m.results)).toEqual([]);
    expect(reasons(cut)[0]).toMatch(/^\d+ bytes outside any frame ignored/);
  });

  it('after the cut, the whole frames that follow are decoded (their checksums verified)', () => {
    const wire = bytes(
      frame(1, 'H|\\^&|||Emu<CR>P|1<CR>', false).slice('<STX>'.length) +
        frame(2, 'H|\\^&|||Emu<CR>O|1|A2<CR>R|1|^^^GLU|6.1|mmol/L||N||F||||20260101120000<CR>L|1<CR>'),
    );
    expect(decode(wire).flatMap((m) => m.results.map((r) => [r.accession, r.valueText]))).toEqual([['A2', '6.1']]);
  });
});
