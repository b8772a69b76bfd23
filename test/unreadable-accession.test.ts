// What cannot be read is not an identity: an accession holding U+FFFD (a byte the instrument's charset could not
// decode) is rejected with its reason in every driver's results, and never looked up when a host query names it.
// One rule (src/result.ts accessionSchema) for all of them.
import { describe, expect, it } from 'vitest';
import { decodeAstmText } from '../drivers/astm/decode.js';
import { decodeHl7Capture } from '../drivers/hl7/decode.js';
import { decodeLineCapture } from '../drivers/line/decode.js';
import { readableQueries } from '../src/orders/answer.js';
import type { OrderQuery } from '../src/orders/order.js';
import { options as astmOptions, profile } from './astm/profile.js';
import { bytes } from './hl7/mnemonic.js';
import { loadLayout, spotchemReport } from './line/layouts.js';

// 0xFF is no UTF-8 byte: read as UTF-8 it becomes U+FFFD, and `24K0231` would be read as `24K\uFFFD0231`.
const half = (text: string): Buffer => Buffer.from(text.replace('24K0231', '24K\xff0231'), 'latin1');
const undecodable = /accession.*could not decode \(U\+FFFD\)/;
const glucose = [{ code: 'GLU', loinc: '2345-7' }];

describe('an accession with a byte that could not be decoded', () => {
  it('ASTM: the result is rejected with its reason', () => {
    const text = half('H|\\^&|||Emu\rP|1\rO|1|24K0231\rR|1|^^^GLU|5|mmol/L||N||F||||20260701101500\rL|1|N\r');
    const d = decodeAstmText(text, profile(glucose), astmOptions({ charset: 'utf8' }));
    expect(d.results).toEqual([]);
    expect(d.rejections.map((r) => r.reason)).toEqual([expect.stringMatching(undecodable)]);
    // Read as Latin-1 every byte is a character: the same bytes are a readable (if odd) accession.
    expect(decodeAstmText(text, profile(glucose), astmOptions()).results).toHaveLength(1);
  });

  it('HL7: the result is rejected with its reason', () => {
    const raw = half(
      ['MSH|^~\\&|HEM|LAB|||20260701101600||ORU^R01|77|P|2.5', 'PID|1', 'OBR|1||24K0231|GLU', 'OBX|1|NM|GLU||5|mmol/L||N|||F|||20260701101500'].join('\r') +
        '\r',
    );
    const [d] = decodeHl7Capture(Buffer.concat([bytes('<VT>'), raw, bytes('<FS><CR>')]), profile(glucose), { charset: 'utf8' });
    expect(d!.results).toEqual([]);
    expect(d!.rejections.map((r) => r.reason)).toEqual([expect.stringMatching(undecodable)]);
  });

  it('line: every result of the report is rejected with its reason', () => {
    const { profile: p, options } = loadLayout('arkray-spotchem-el.yaml');
    const [d] = decodeLineCapture(half(bytes(spotchemReport).toString('latin1')), p, { ...options, encoding: 'utf8' });
    expect(d!.results).toEqual([]);
    expect(d!.rejections.map((r) => r.reason)).toEqual(Array(3).fill(expect.stringMatching(undecodable)));
  });

  it('a host query: the id is refused (counted), the others are asked; a range with such an end too', () => {
    const q = (...specimens: OrderQuery['specimens']): OrderQuery => ({ specimens, tests: 'all', request: 'orders', requestCode: 'O' });
    const { queries, unreadable } = readableQueries([
      q({ kind: 'id', accession: '24K\ufffd0231' }, { kind: 'id', accession: 'S2' }),
      q({ kind: 'range', from: '100', to: '2\ufffd0' }),
      q({ kind: 'all' }),
    ]);
    expect(queries).toEqual([q({ kind: 'id', accession: 'S2' }), q({ kind: 'all' })]);
    expect(unreadable).toBe(2);
  });
});
