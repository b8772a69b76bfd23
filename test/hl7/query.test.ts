// HL7 host queries in the two dialects analyzers send, read field by field into the protocol-neutral OrderQuery.
import { describe, expect, test } from 'vitest';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { hl7Options } from '../../drivers/hl7/options.js';
import { mindrayBs } from './fixtures.js';
import { segments } from './mnemonic.js';

const decode = (payload: string) => decodeHl7Message(Buffer.from(payload, 'latin1'), mindrayBs.profile, hl7Options({}));

// v2.3.1 original-mode display query as Mindray's BS/BC host interface manuals define it: QRD-8 the sample barcode,
// QRD-9 OTH, QRF with the query's time range.
const qry = segments(
  'MSH|^~\\&|||||20241105101500||QRY^Q02|7|P|2.3.1||||||ASCII|||',
  'QRD|20241105101500|R|D|7|||RD|2411050031|OTH|||T|',
  'QRF||||||RCT|COR|ALL||',
);

// IHE LAW query for a work order step: QPD-1 WOS, QPD-2 the query tag, QPD-3 the container id; RCP-1 I (immediate).
const qbp = segments(
  'MSH|^~\\&|ANALYZER|LAB|LIS|HOSP|20241105101500||QBP^Q11^QBP_Q11|Q-1|P|2.5.1|||NE|AL||UNICODE UTF-8|||LAB-27^IHE',
  'QPD|WOS^Work Order Step^IHE_LABTF|Q-1|CONT-4471^LAB',
  'RCP|I||R',
);

describe('HL7 host queries', () => {
  test('QRY^Q02: the sample barcode in QRD-8, QRD-9 as the request code', () => {
    const d = decode(qry);
    expect(d.kind).toBe('query');
    expect(d.decoded.queries).toEqual([{ specimens: [{ kind: 'id', accession: '2411050031' }], tests: 'all', request: 'orders', requestCode: 'OTH' }]);
    expect(d.decoded.results).toEqual([]);
  });

  test('QBP^Q11: the container id in QPD-3, the query name WOS as the request code', () => {
    expect(decode(qbp).decoded.queries).toEqual([{ specimens: [{ kind: 'id', accession: 'CONT-4471' }], tests: 'all', request: 'orders', requestCode: 'WOS' }]);
  });

  test('several barcodes (QRD-8 repetitions, escapes undone) are several specimens, each once', () => {
    const many = qry.replace('|RD|2411050031|', '|RD|A\\T\\1~B-2~A&1~|');
    expect(decode(many).decoded.queries?.[0]?.specimens).toEqual([
      { kind: 'id', accession: 'A&1' },
      { kind: 'id', accession: 'B-2' },
    ]);
  });

  test('a query that names no specimen asks for nothing labgate can answer', () => {
    expect(decode(qry.replace('|RD|2411050031|', '|RD||')).decoded.queries?.[0]).toMatchObject({ specimens: [], request: 'unsupported' });
    expect(decode(qbp.replace(/\rQPD[^\r]*/, '')).decoded.queries?.[0]).toMatchObject({ specimens: [], request: 'unsupported' });
  });

  test('until HL7 two-way answers them, a query is journaled with the reason it was not answered', () => {
    expect(decode(qry).decoded.rejections).toEqual([{ reason: "host query QRY^Q02 not answered: this instrument's options.orders.query is off" }]);
  });
});
