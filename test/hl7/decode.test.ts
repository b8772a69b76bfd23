import { describe, expect, test } from 'vitest';
import { decodeHl7Capture, splitHl7Capture } from '../../drivers/hl7/decode.js';
import { hl7Options, hl7OptionsSchema } from '../../drivers/hl7/options.js';
import { hematology25, mindrayBs, radiometerAbl } from './fixtures.js';
import { bytes, mllp } from './mnemonic.js';

describe('decodeHl7Capture uses the configured framing, never a guess', () => {
  const bare = Buffer.from(mindrayBs.payload + mindrayBs.payload.replace('|12|P|', '|13|P|'), 'latin1');
  const framed = Buffer.concat([mllp(mindrayBs.payload), mllp(mindrayBs.payload.replace('|12|P|', '|13|P|'))]);

  test('bare segments (framing none) and MLLP blocks (framing mllp) decode alike', () => {
    const a = decodeHl7Capture(bare, mindrayBs.profile, { ...mindrayBs.options, framing: 'none' });
    expect(a).toHaveLength(2);
    expect(a.flatMap((m) => m.results)).toHaveLength(6);
    expect(decodeHl7Capture(framed, mindrayBs.profile, mindrayBs.options)).toEqual(a);
  });

  test('bare segments read with MLLP framing are reported, not decoded, as the runner would discard them', () => {
    expect(decodeHl7Capture(bare, mindrayBs.profile, mindrayBs.options)).toEqual([
      { results: [], rejections: [{ reason: `${bare.length} bytes outside any MLLP block ignored (the instrument's framing is mllp)` }] },
    ]);
  });

  test('MLLP blocks read with framing none are one message each, their VT and FS left in (a runner would reject them too)', () => {
    const decoded = decodeHl7Capture(framed, mindrayBs.profile, { ...mindrayBs.options, framing: 'none' });
    expect(decoded.flatMap((m) => m.results)).toHaveLength(0);
    expect(decoded.length).toBeGreaterThan(0);
  });

  test('bare messages with LF segment ends split on MSH', () => {
    const two = Buffer.from(hematology25.payload + hematology25.payload, 'latin1');
    expect(splitHl7Capture(two, hl7Options({ framing: 'none' }))).toHaveLength(2);
  });

  test('an unterminated last block and an oversize block become rejections', () => {
    const raw = Buffer.concat([mllp(radiometerAbl.payload), mllp('MSH|^~\\&|' + 'x'.repeat(3000)), bytes('<VT>MSH|^~\\&|cut')]);
    const decoded = decodeHl7Capture(raw, radiometerAbl.profile, { maxMessageBytes: 2048 });
    expect(decoded.map((m) => m.rejections.map((r) => r.reason))).toEqual([
      [],
      ['message of 3009 bytes exceeds maxMessageBytes 2048'],
      ['MLLP block of 12 bytes never ended'],
    ]);
  });

  test('an empty capture holds no message', () => {
    expect(decodeHl7Capture(Buffer.from('\r\n'), mindrayBs.profile)).toEqual([]);
  });
});

describe('options', () => {
  test('parsing options twice is harmless (the runtime may validate them at load)', () => {
    const once = hl7Options({ ...mindrayBs.options, framing: 'none' });
    expect(hl7Options(once)).toEqual(once);
    expect(decodeHl7Capture(Buffer.from(mindrayBs.payload, 'latin1'), mindrayBs.profile, once)[0]!.results).toHaveLength(3);
  });

  test('a misspelt option or a bad field reference is a configuration error', () => {
    expect(hl7OptionsSchema.safeParse({ acession: ['OBR-3'] }).success).toBe(false);
    expect(hl7OptionsSchema.safeParse({ accession: ['obr-3'] }).error?.issues[0]?.message).toMatch(
      /'obr-3' is not a field location: 'obr' is not a segment id/,
    );
    expect(hl7OptionsSchema.safeParse({ time: ['PID-7'] }).error?.issues[0]?.message).toBe(
      "'PID-7': a result time is not read from patient data (PID, PD1, NK1)",
    );
  });
});
