// Fuzzing the ASTM capture decoder (`labgate decode`, reprocessing): any capture, any configuration. It never
// throws; a capture corrupted by one byte yields no result its uncorrupted self does not (a refused frame's
// content never gets through); time is linear in the capture.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import { encodeFrame } from '../../drivers/astm/frame.js';
import { parseAstmOptions } from '../../drivers/astm/options.js';
import type { KeyedResult } from '../../src/result.js';
import { dialects } from '../astm/fixtures/dialects.js';
import { bytes } from '../astm/mnemonics.js';
import { profile } from '../astm/profile.js';
import { mutate, session, wireArb } from './astm-wire.js';
import { expectLinear, runs } from './linear.js';

const key = (r: KeyedResult): string => JSON.stringify([r.accession, r.analyteLoinc, r.valueText, r.resultedAt]);
const cases = dialects.map((d) => ({ name: d.name, wire: bytes(d.wire), p: profile(d.mapping, { timezone: d.timezone }), o: parseAstmOptions(d.options) }));

describe('ASTM capture decoder under fuzzing', () => {
  it('never throws, whatever the capture and the configuration', () => {
    fc.assert(
      fc.property(fc.array(wireArb, { maxLength: 4 }), fc.constantFrom(...cases), fc.constantFrom('link' as const, 'none' as const), (wires, c, framing) => {
        decodeAstmCapture(Buffer.concat(wires), c.p, { ...c.o, framing });
      }),
      { numRuns: runs(300) },
    );
  });

  it('one corrupted, inserted or deleted byte never yields a result the capture did not hold', () => {
    const edit = fc.record({ how: fc.constantFrom('replace', 'insert', 'delete'), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });
    fc.assert(
      fc.property(fc.constantFrom(...cases.filter((c) => c.o.framing === 'link')), edit, (c, e) => {
        const sent = new Set(
          decodeAstmCapture(c.wire, c.p, c.o)
            .flatMap((m) => m.results)
            .map(key),
        );
        for (const r of decodeAstmCapture(mutate(c.wire, [e]), c.p, c.o).flatMap((m) => m.results)) expect(sent.has(key(r))).toBe(true);
      }),
      { numRuns: runs(1000) },
    );
  });
});

describe('ASTM capture decoder: time linear in the capture', () => {
  const p = profile([{ code: 'GLU', loinc: '2345-7' }]);
  const o = parseAstmOptions({ maxFrameBytes: 64_000 });
  const message = 'H|\\^&|||Fuzz\rP|1\rO|1|A1\rR|1|^^^GLU|5.4|||||F||||20260101120000\rL|1|N\r';

  it('many messages', () => {
    expectLinear(
      'messages',
      (scale) =>
        session(
          Array.from({ length: 20 * scale }, () => message),
          247,
        ),
      (wire) => decodeAstmCapture(wire, p, o),
    );
  });

  it('one message of many results', () => {
    const many = (n: number): string =>
      ['H|\\^&|||Fuzz', 'P|1', 'O|1|A1', ...Array.from({ length: n }, (_, i) => `R|${i}|^^^GLU|5.${i}|||||F||||20260101120000`), 'L|1'].join('\r') + '\r';
    expectLinear(
      'results in a message',
      (scale) => session([many(20 * scale)], 247),
      (wire) => decodeAstmCapture(wire, p, o),
    );
  });

  it('long values, components and repeats (no long run of digits: the number reader is measured on its own)', () => {
    const long = (n: number): string => `H|\\^&\rO|1|A1\rR|1|^^^GLU|${'a^b\\c&S&'.repeat(n)}|||||F||||20260101120000\rL|1\r`;
    expectLinear(
      'long values',
      (scale) => Buffer.concat([Buffer.from([0x05]), encodeFrame(1, Buffer.from(long(60 * scale), 'latin1'), true)]),
      (wire) => decodeAstmCapture(wire, p, o),
    );
  });

  it('random captures, repeated', () => {
    fc.assert(
      fc.property(wireArb, fc.constantFrom('link' as const, 'none' as const), (wire, framing) => {
        const base = Buffer.concat(Array.from({ length: Math.ceil(600 / Math.max(wire.length, 1)) }, () => wire));
        expectLinear(
          'random capture',
          (scale) => Buffer.concat(Array.from({ length: scale }, () => base)),
          (raw) => decodeAstmCapture(raw, p, { ...o, framing }),
        );
      }),
      { numRuns: runs(3, 20) },
    );
  });
});
