// Property tests: random messages round-trip emulator → link layer → records; random corruption of a byte
// never crashes anything and never yields a result that was not sent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { canonicalInstant } from '../../src/result.js';
import type { KeyedResult } from '../../src/result.js';
import { harness } from './harness.js';
import { transportPair } from './pair.js';
import { options, profile } from './profile.js';
import { framed } from './fixtures/dialects.js';
import { bytes } from './mnemonics.js';

const codes = ['GLU', 'NA', 'K', 'CL', 'CRP'];
const p = profile(codes.map((code, i) => ({ code, loinc: `1000${i}-0` })));
const o = options();

interface SentResult {
  accession: string;
  code: string;
  value: string;
  at: number;
}

/** Printable Latin-1 text, delimiters included (they travel escaped). */
const valueText = fc
  .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xfe })), { minLength: 0, maxLength: 30 })
  .map((cs) => String.fromCharCode(...cs).trim());
const value = fc.oneof(
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map((v) => v.toFixed(3)),
  valueText,
);
const result = fc.record({
  accession: fc.stringMatching(/^[A-Z0-9][A-Z0-9-]{0,11}$/),
  code: fc.constantFrom(...codes),
  value,
  at: fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 0, 1) }).map((t) => Math.floor(t / 1000) * 1000),
});
const message = fc.array(result, { minLength: 1, maxLength: 8 });

const escape = (s: string): string => s.replace(/&/g, '&E&').replace(/\|/g, '&F&').replace(/\^/g, '&S&').replace(/\\/g, '&R&');
const stamp = (t: number): string => new Date(t).toISOString().replace(/[-:T]/g, '').slice(0, 14);

/** One LIS2-A2 message: a patient and an order per result, so accessions may differ. */
function records(rs: SentResult[]): string[] {
  return [
    'H|\\^&|||Prop^1',
    ...rs.flatMap((r, i) => [`P|${i + 1}`, `O|1|${r.accession}`, `R|1|^^^${r.code}|${escape(r.value)}|||||F||||${stamp(r.at)}`]),
    'L|1|N',
  ];
}

const sentKey = (r: SentResult): string => JSON.stringify([r.accession, r.code, r.value, canonicalInstant(r.at)]);
const gotKey = (r: KeyedResult): string => JSON.stringify([r.accession, r.source.analyzerCode, r.valueText, r.resultedAt]);

describe('ASTM properties', () => {
  it('every result of random messages survives emulator → link layer → records, with faults injected', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 12, max: 400 }),
        fc.constantFrom('message' as const, 'record' as const),
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 3 }),
        fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 3 }),
        async (messages, maxFrameBytes, framesPer, corruptChecksum, duplicateFrame) => {
          const { analyzer, gateway } = transportPair();
          const h = harness(p, options({ maxFrameBytes: Math.max(maxFrameBytes, 247) }), gateway);
          const emulator = new AstmEmulator(analyzer, h.clock, { maxFrameBytes, framesPer, faults: { corruptChecksum, duplicateFrame } });
          const texts = messages.map((m) => records(m).join('\r') + '\r');
          const outcome = await h.clock.run(emulator.send(texts));
          expect(outcome.kind).toBe('sent');
          const got = h.messages.flatMap((m) => m.results).map(gotKey);
          expect(got).toEqual(messages.flat().map(sentKey));
          expect(h.messages.flatMap((m) => m.rejections)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('one corrupted, inserted or deleted byte never crashes and never yields a result that was not sent', () => {
    fc.assert(
      fc.property(
        message,
        fc.integer({ min: 40, max: 247 }),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom('replace', 'insert', 'delete'),
        (rs, size, at, byte, how) => {
          const wire = bytes('<ENQ>' + framed(records(rs), size) + '<EOT>');
          const i = at % wire.length;
          const bad =
            how === 'replace'
              ? Buffer.from(wire.map((b, j) => (j === i ? byte : b)))
              : how === 'insert'
                ? Buffer.concat([wire.subarray(0, i), Buffer.from([byte]), wire.subarray(i)])
                : Buffer.concat([wire.subarray(0, i), wire.subarray(i + 1)]);
          const sent = new Set(rs.map(sentKey));
          const decoded = decodeAstmCapture(bad, p, o).flatMap((m) => m.results);
          for (const r of decoded) expect(sent.has(gotKey(r))).toBe(true);
          const h = harness(p, o);
          for (let j = 0; j < bad.length; j += 7) h.transport.emitData(bad.subarray(j, j + 7));
          h.clock.advance(60_000);
          for (const r of h.messages.flatMap((m) => m.results)) expect(sent.has(gotKey(r))).toBe(true);
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('random bytes never crash the decoder or the runner', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (data) => {
        const buf = Buffer.from(data);
        decodeAstmCapture(buf, p, o);
        decodeAstmCapture(buf, p, options({ framing: 'none' }));
        const h = harness(p, o);
        h.transport.emitData(Buffer.concat([Buffer.from([5, 2]), buf]));
        h.clock.advance(60_000);
      }),
      { numRuns: 500 },
    );
  });
});
