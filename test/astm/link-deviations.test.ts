// The link-layer deviations real analyzers need, each an explicit option whose default is the standard:
// a message complete at EOT without an L record, and `STX text ETX` frames with no number, checksum or trailer.
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { options, profile } from './profile.js';

const ACK = 'write 6';
const NAK = 'write 21';
const p = profile([{ code: '413', loinc: '1751-7', unit: 'g/L' }]);
const records = [
  'H|\\^&|||c111^Roche^c111|||||host|RSUPL^REAL|P|1|20260803131713<CR>',
  'P|1<CR>',
  'O|1|S-77||^^^413|R||||||N|||||||||||20260803131713|||F<CR>',
  'R|1|^^^413|40.13|g/L||N||F||$SYS$||20260803131700<CR>',
];
/** One record per frame, ETB on all but the last, and no L record (some cobas c111 firmware). */
const withoutL = '<ENQ>' + records.map((r, i) => frame(i + 1, r, i === records.length - 1)).join('') + '<EOT>';
const results = (o: AstmOptionsInput, wire: string) => decodeAstmCapture(bytes(wire), p, options(o));

describe('deviations.completeAtEot', () => {
  it('by default a message without an L record is discarded at EOT', () => {
    const h = harness(p, options());
    h.transport.emitData(bytes(withoutL));
    expect(h.messages).toEqual([]);
    expect(h.events).toContainEqual({ kind: 'discarded', reason: 'EOT before the L terminator record' });
    expect(results({}, withoutL).flatMap((m) => m.rejections.map((r) => r.reason))).toEqual(['message discarded: EOT before the L terminator record']);
  });

  it('with the option, EOT completes it: committed once, with its result and no rejection', () => {
    const h = harness(p, options({ deviations: { completeAtEot: true } }));
    h.transport.emitData(bytes(withoutL));
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.results.map((r) => [r.accession, r.valueText])).toEqual([['S-77', '40.13']]);
    expect(h.messages[0]!.rejections).toEqual([]);
    expect(h.trace).toEqual([ACK, ACK, ACK, ACK, ACK, 'ingest']);
    const decoded = results({ deviations: { completeAtEot: true } }, withoutL);
    expect(decoded.flatMap((m) => m.results).map((r) => r.valueText)).toEqual(['40.13']);
    expect(decoded.flatMap((m) => m.rejections)).toEqual([]);
  });

  it('a message whose last frame ended with ETB is still cut short at EOT', () => {
    const cut = '<ENQ>' + records.map((r, i) => frame(i + 1, r, false)).join('') + '<EOT>';
    const h = harness(p, options({ deviations: { completeAtEot: true } }));
    h.transport.emitData(bytes(cut));
    expect(h.messages).toEqual([]);
    expect(h.events).toContainEqual({ kind: 'discarded', reason: 'EOT before the L terminator record' });
  });

  it('a failed commit at EOT cannot be NAKed: the message is held, ENQ is answered busy, and it is retried', () => {
    const h = harness(p, options({ deviations: { completeAtEot: true } }));
    let failures = 2;
    h.setIngest((m) => {
      if (failures-- > 0) return { kind: 'unavailable', reason: 'disk full' };
      h.messages.push(m);
      return { kind: 'committed', summary: { captureId: 1, inserted: 1, absorbed: 0, conflicts: 0, rejected: 0 }, rejections: [] };
    });
    h.transport.emitData(bytes(withoutL));
    expect(h.messages).toEqual([]);
    h.transport.emitData(bytes('<ENQ>'));
    expect(h.trace.at(-1)).toBe(NAK);
    h.clock.advance(5_000);
    expect(h.messages).toEqual([]);
    h.clock.advance(5_000);
    expect(h.messages).toHaveLength(1);
    expect(h.trace.filter((t) => t === 'ingest')).toHaveLength(3);
    h.transport.emitData(bytes('<ENQ>'));
    expect(h.trace.at(-1)).toBe(ACK);
    expect(h.clock.pending).toBe(1);
  });
});

describe('deviations.frameFormat: stx-text-etx', () => {
  const bare = (text: string, final = true): string => `<STX>${text}${final ? '<ETX>' : '<ETB>'}`;
  const wire = '<ENQ>' + bare(records.join(''), false) + bare('L|1|N<CR>') + '<EOT>';

  it('frames with no number, checksum or trailer are read and answered one by one', () => {
    const h = harness(p, options({ deviations: { frameFormat: 'stx-text-etx' } }));
    h.transport.emitData(bytes(wire));
    expect(h.trace).toEqual([ACK, ACK, 'ingest', ACK]);
    expect(h.messages[0]!.results.map((r) => r.valueText)).toEqual(['40.13']);
    expect(h.messages[0]!.capture.raw).toEqual(bytes(wire.replace('<EOT>', '')));
  });

  it('the standard framing refuses them', () => {
    const h = harness(p, options());
    h.transport.emitData(bytes(wire));
    expect(h.messages).toEqual([]);
    expect(h.trace.slice(1).every((t) => t === NAK)).toBe(true);
  });

  it('the same frame again is a retransmission after a lost ACK: ACKed and dropped', () => {
    const h = harness(p, options({ deviations: { frameFormat: 'stx-text-etx' } }));
    h.transport.emitData(bytes('<ENQ>' + bare(records[0]!, false) + bare(records[0]!, false) + bare(records.slice(1).join('') + 'L|1<CR>')));
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.results).toHaveLength(1);
  });

  it('a restricted character in the text is still refused', () => {
    const h = harness(p, options({ deviations: { frameFormat: 'stx-text-etx' } }));
    h.transport.emitData(bytes('<ENQ>' + bare('H|\\^&<NAK><CR>')));
    expect(h.events).toContainEqual({ kind: 'nak', reason: 'restricted-character' });
  });
});
