// Six analyzer dialects through the decoder and through the runner, chunked as a serial line delivers them.
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import type { KeyedResult } from '../../src/result.js';
import { dialects } from './fixtures/dialects.js';
import { harness } from './harness.js';
import { bytes } from './mnemonics.js';
import { options, profile } from './profile.js';

const tuple = (r: KeyedResult): [string, string, string, string, string, boolean] => [
  r.accession,
  r.source.analyzerCode,
  r.analyteLoinc,
  r.valueText,
  r.resultedAt,
  r.qc,
];

/** Deterministic chunk sizes 1..17, as a UART FIFO delivers bytes. */
function chunks(data: Buffer, seed: number): Buffer[] {
  const out: Buffer[] = [];
  let x = seed;
  for (let i = 0; i < data.length;) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (x % 17);
    out.push(data.subarray(i, i + n));
    i += n;
  }
  return out;
}

describe.each(dialects)('dialect: $name', (d) => {
  const p = profile(d.mapping, { timezone: d.timezone });
  const o = options(d.options);

  it('decodes to the documented results', () => {
    const decoded = decodeAstmCapture(bytes(d.wire), p, o);
    expect(decoded.flatMap((m) => m.results).map(tuple)).toEqual(d.results);
    expect(decoded.flatMap((m) => m.rejections).map((r) => r.reason)).toEqual(d.rejections ?? []);
  });

  it.each([1, 2, 3])('runner: chunked delivery (seed %i), every message committed before its ACK', async (seed) => {
    const h = harness(p, o);
    for (const c of chunks(bytes(d.wire), seed)) h.transport.emitData(c);
    expect(h.messages.flatMap((m) => m.results).map(tuple)).toEqual(d.results);
    expect(h.events.filter((e) => e.kind === 'nak')).toEqual([]);
    if (o.framing === 'link') {
      // one ACK per ENQ and frame; the ACK after each ingest comes after it, never before
      const ingestAt = h.trace.indexOf('ingest');
      expect(ingestAt).toBeGreaterThan(0);
      expect(h.trace.slice(ingestAt + 1)[0]).toBe('write 6');
    }
    expect(h.messages.every((m) => m.capture.protocol === 'astm' && m.capture.instrumentId === 'chem-1')).toBe(true);
    await h.stop();
  });

  it('the journaled raw bytes decode again to the same results', () => {
    const h = harness(p, o);
    h.transport.emitData(bytes(d.wire));
    const again = h.messages.flatMap((m) => decodeAstmCapture(m.capture.raw, p, o)).flatMap((m) => m.results);
    expect(again.map(tuple)).toEqual(d.results);
  });
});
