// A run of 100,000 digits followed by a non-digit, as an ASTM, HL7 and printed-line value: kept as text (HL7 NM:
// rejected with its reason), and decoded in time proportional to its length. Measured as a ratio between 10,000 and
// 100,000 digits in the same run (linear work gives about 10; the backtracking patterns this replaced gave about 100).
import { describe, expect, it } from 'vitest';
import { decodeAstmText } from '../drivers/astm/decode.js';
import { decodeHl7Capture } from '../drivers/hl7/decode.js';
import { decodeLineCapture } from '../drivers/line/decode.js';
import { lineOptions } from '../drivers/line/options.js';
import type { InstrumentProfile } from '../src/config/mapping.js';
import type { DecodedMessage } from '../src/message.js';
import { options } from './astm/profile.js';

const profile: InstrumentProfile = { id: 'i-1', gatewayId: 'gw', timezone: 'UTC', mapping: [{ code: 'GLU', loinc: '2345-7' }] };

const astm = (value: string) => decodeAstmText(Buffer.from(`H|\\^&\rO|1|A1\rR|1|^^^GLU|${value}|||||F||||20260701100000\rL|1\r`, 'latin1'), profile, options());
const hl7 = (type: string) => (value: string) =>
  decodeHl7Capture(
    Buffer.from(`MSH|^~\\&|A|B|||20260701100000||ORU^R01|1|P|2.5\rOBR|1||A1|P|||20260701100000\rOBX|1|${type}|GLU||${value}||||||F\r`, 'latin1'),
    profile,
    { framing: 'none' },
  )[0]!;
const lineLayout = lineOptions({
  start: '^ID (?<accession>\\S+) (?<year>\\d{4})(?<month>\\d\\d)(?<day>\\d\\d)(?<hour>\\d\\d)(?<minute>\\d\\d)',
  result: '^(?<code>GLU) (?<value>\\S+)',
  idleMs: 1000,
  maxLineBytes: 1_048_576,
});
const line = (value: string) => decodeLineCapture(Buffer.from(`ID A1 202607011000\nGLU ${value}\n`, 'latin1'), profile, lineLayout)[0]!;

const digits = (n: number) => '1'.repeat(n) + 'x';

// The least of several timings: a busy machine only ever makes a run slower.
function fastest(run: () => unknown, rounds = 7): number {
  let best = Infinity;
  for (let i = 0; i < rounds; i += 1) {
    const start = process.hrtime.bigint();
    run();
    best = Math.min(best, Number(process.hrtime.bigint() - start));
  }
  return best;
}

describe('a 100,000-digit value followed by a non-digit', () => {
  it.each([
    ['ASTM R.4', astm],
    ['HL7 ST', hl7('ST')],
    ['line', line],
  ])('%s stays text with no value, in linear time', (_name, decode: (value: string) => DecodedMessage) => {
    const decoded = decode(digits(100_000));
    expect(decoded.rejections).toEqual([]);
    expect(decoded.results[0]).toMatchObject({ valueText: digits(100_000), value: null, comparator: null, bound: null });
    decode(digits(10_000));
    const ratio = fastest(() => decode(digits(100_000))) / fastest(() => decode(digits(10_000)));
    expect(ratio).toBeLessThan(30);
  });

  it('HL7 NM: rejected with its reason, in linear time', () => {
    const decode = hl7('NM');
    expect(decode(digits(100_000)).rejections[0]?.reason).toMatch(/is not a number \(OBX-2 NM\): longer than 64 characters/);
    const ratio = fastest(() => decode(digits(100_000))) / fastest(() => decode(digits(10_000)));
    expect(ratio).toBeLessThan(30);
  });

  it('309 digits (beyond a double) stay text in every driver, never Infinity and never a rejected row', () => {
    const huge = '9'.repeat(309);
    for (const decode of [astm, hl7('ST'), line]) expect(decode(huge).results[0]).toMatchObject({ valueText: huge, value: null });
  });
});
