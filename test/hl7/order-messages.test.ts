// The two HL7 order dialects' messages, field by field: the v2.3.1 display query's QCK^Q02 and DSR^Q03 (Mindray BS/BC
// host interface manuals) and IHE LAW's RSP^K11 and OML^O33, each encoded by the one encoder and read back.
import { describe, expect, test } from 'vitest';
import { displayPositions, displayResponse, queryAcknowledgment, acceptsDisplay } from '../../drivers/hl7/display-query.js';
import { encodeMessage, type SegmentValue } from '../../drivers/hl7/encode.js';
import { readHeader } from '../../drivers/hl7/header.js';
import { parseMessage, valueAt, type Hl7Message, type Segment } from '../../drivers/hl7/parse.js';
import { acceptsWorkOrder, queryResponse, workOrder } from '../../drivers/hl7/work-order.js';
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { segments } from './mnemonic.js';

const now = Date.UTC(2024, 10, 5, 10, 15, 30);

function parsed(text: string): Hl7Message {
  const p = parseMessage(text);
  if (p.kind !== 'message') throw new Error(p.reason);
  return p.message;
}

/** Encodes with the query's delimiters and reads the message back, as the analyzer will. */
function written(segs: SegmentValue[], like: Hl7Message, charset: 'latin1' | 'utf8' = 'latin1'): Hl7Message {
  const encoded = encodeMessage(segs, like.delimiters, charset);
  if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
  return parsed(encoded.payload.toString(charset));
}

const at = (m: Hl7Message, seg: Segment, field: number, component?: number): string => valueAt(seg, m.delimiters, component ? { field, component } : { field });
const all = (m: Hl7Message, id: string): Segment[] => m.segments.filter((s) => s.id === id);
const one = (m: Hl7Message, id: string): Segment => all(m, id)[0]!;

const specimen: InstrumentSpecimen = {
  accession: '2411050031',
  patient: { id: 'PAT-9', name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' },
  orders: [
    { orderId: 'ORD-1', loinc: '2345-7', priority: 'routine', orderedAt: '2024-11-05T09:00:00Z', analyzerCode: 'GLU' },
    { orderId: 'ORD-2', loinc: '2823-3', priority: 'stat', orderedAt: '2024-11-05T09:00:00Z', analyzerCode: 'K|2' },
  ],
};

describe('v2.3.1 display query (QRY^Q02 → QCK^Q02, DSR^Q03 → ACK^Q03)', () => {
  // The query's own encoding characters (`#` for components) must be the answer's.
  const query = parsed(
    segments(
      'MSH|#~\\&|BS-240|LAB|||20241105101500||QRY#Q02|7|P|2.3.1||||||ASCII|||',
      'QRD|20241105101500|R|D|7|||RD|2411050031|OTH|||T|',
      'QRF||||||RCT|COR|ALL||',
    ),
  );
  const header = readHeader(query);

  test('QCK^Q02: MSA AA echoing MSH-10, ERR 0, QAK SR OK or NF', () => {
    for (const [found, status] of [
      [true, 'OK'],
      [false, 'NF'],
    ] as const) {
      const m = written(queryAcknowledgment(header, found, now, 'LABGATE'), query);
      const msh = one(m, 'MSH');
      expect(m.delimiters.component).toBe('#');
      expect([at(m, msh, 3), at(m, msh, 5), at(m, msh, 9, 1), at(m, msh, 9, 2), at(m, msh, 10), at(m, msh, 12)]).toEqual([
        'LABGATE',
        'BS-240',
        'QCK',
        'Q02',
        '7',
        '2.3.1',
      ]);
      expect([1, 2, 3, 6].map((f) => at(m, one(m, 'MSA'), f))).toEqual(['AA', '7', 'Message accepted', '0']);
      expect(at(m, one(m, 'ERR'), 1)).toBe('0');
      expect([at(m, one(m, 'QAK'), 1), at(m, one(m, 'QAK'), 2)]).toEqual(['SR', status]);
    }
  });

  test('DSR^Q03: QRD and QRF echoed, DSP-1 numbered from 1, the barcode at 21, stat at 24, one test per DSP from 29', () => {
    const m = written(
      displayResponse(query, header, specimen, { sampleType: 'serum', sampleTime: '20241105090000', patient: true }, 'L-8', now, 'LABGATE'),
      query,
    );
    expect([at(m, one(m, 'MSH'), 9, 1), at(m, one(m, 'MSH'), 9, 2), at(m, one(m, 'MSH'), 10)]).toEqual(['DSR', 'Q03', 'L-8']);
    expect(at(m, one(m, 'MSA'), 2)).toBe('7');
    expect(at(m, one(m, 'QRD'), 8)).toBe('2411050031');
    expect(at(m, one(m, 'QRF'), 8)).toBe('ALL');
    const dsp = all(m, 'DSP');
    expect(dsp.map((s) => at(m, s, 1))).toEqual(Array.from({ length: 30 }, (_, i) => String(i + 1)));
    const line = (n: number): string => at(m, dsp[n - 1]!, 3);
    expect(line(displayPositions.patientId)).toBe('PAT-9');
    // A name holding the component character travels escaped and reads back whole.
    expect(line(displayPositions.patientName)).toBe('Doe^Jane');
    expect([line(displayPositions.birthDate), line(displayPositions.sex)]).toEqual(['19700102', 'F']);
    expect([line(21), line(23), line(24), line(26)]).toEqual(['2411050031', '20241105090000', 'Y', 'serum']);
    expect([at(m, dsp[28]!, 3, 1), at(m, dsp[29]!, 3, 1)]).toEqual(['GLU', 'K|2']);
    expect(all(m, 'DSC')).toHaveLength(1);
  });

  test('without options.orders.patient the patient lines stay empty', () => {
    const m = written(displayResponse(query, header, specimen, { sampleType: '', sampleTime: '', patient: false }, 'L-9', now, 'LABGATE'), query);
    const dsp = all(m, 'DSP');
    expect([1, 3, 4, 5].map((n) => at(m, dsp[n - 1]!, 3))).toEqual(['', '', '', '']);
    expect(JSON.stringify(m)).not.toContain('Doe');
  });

  test('ACK^Q03 accepts the display response it names, and only that one', () => {
    const ack = (code: string, id: string) => parsed(segments('MSH|^~\\&|BS-240||LABGATE||20241105101501||ACK^Q03|9|P|2.3.1', `MSA|${code}|${id}`));
    expect(acceptsDisplay(ack('AA', 'L-8'), readHeader(ack('AA', 'L-8')), 'L-8')).toBe(true);
    expect(acceptsDisplay(ack('AE', 'L-8'), readHeader(ack('AE', 'L-8')), 'L-8')).toBe(false);
    expect(acceptsDisplay(ack('AA', 'L-7'), readHeader(ack('AA', 'L-7')), 'L-8')).toBe(false);
  });
});

describe('IHE LAW (QBP^Q11 → RSP^K11; OML^O33 → ORL^O34)', () => {
  const query = parsed(
    segments(
      'MSH|^~\\&|ANALYZER|LAB|LIS|HOSP|20241105101500||QBP^Q11^QBP_Q11|Q-1|P|2.5.1|||NE|AL||UNICODE UTF-8|||LAB-27^IHE',
      'QPD|WOS^Work Order Step^IHE_LABTF|TAG-77|CONT-4471^LAB',
      'RCP|I||R',
    ),
  );

  test('RSP^K11: MSA AA, QAK with the query tag and OK or NF, QPD echoed', () => {
    for (const [found, status] of [
      [true, 'OK'],
      [false, 'NF'],
    ] as const) {
      const m = written(queryResponse(query, readHeader(query), found, now, 'LABGATE'), query);
      expect([1, 2, 3].map((c) => at(m, one(m, 'MSH'), 9, c))).toEqual(['RSP', 'K11', 'RSP_K11']);
      expect([at(m, one(m, 'MSA'), 1), at(m, one(m, 'MSA'), 2)]).toEqual(['AA', 'Q-1']);
      expect([at(m, one(m, 'QAK'), 1), at(m, one(m, 'QAK'), 2)]).toEqual(['TAG-77', status]);
      expect([at(m, one(m, 'QPD'), 1, 1), at(m, one(m, 'QPD'), 3, 1)]).toEqual(['WOS', 'CONT-4471']);
    }
  });

  test('OML^O33: SPM and SAC name the specimen, each test an ORC NW, TQ1 priority and OBR with the analyzer code', () => {
    const address = {
      sendingApplication: 'LABGATE',
      receivingApplication: 'ANALYZER',
      controlId: 'W-1',
      specimenType: 'SER',
      codingSystem: '99ROC',
      patient: false,
    };
    const m = written(workOrder(specimen, address, now), query, 'utf8');
    const msh = one(m, 'MSH');
    expect([
      at(m, msh, 3),
      at(m, msh, 5),
      at(m, msh, 9, 1),
      at(m, msh, 9, 2),
      at(m, msh, 10),
      at(m, msh, 12),
      at(m, msh, 15),
      at(m, msh, 16),
      at(m, msh, 21, 1),
    ]).toEqual(['LABGATE', 'ANALYZER', 'OML', 'O33', 'W-1', '2.5.1', 'AL', 'AL', 'LAB-28']);
    expect(at(m, one(m, 'PID'), 5)).toBe('');
    expect([at(m, one(m, 'SPM'), 2), at(m, one(m, 'SPM'), 4), at(m, one(m, 'SAC'), 3)]).toEqual(['2411050031', 'SER', '2411050031']);
    expect(all(m, 'ORC').map((s) => [at(m, s, 1), at(m, s, 2)])).toEqual([
      ['NW', 'ORD-1'],
      ['NW', 'ORD-2'],
    ]);
    expect(all(m, 'TQ1').map((s) => at(m, s, 9))).toEqual(['R', 'S']);
    expect(all(m, 'OBR').map((s) => [at(m, s, 2), at(m, s, 4, 1), at(m, s, 4, 3)])).toEqual([
      ['ORD-1', 'GLU', '99ROC'],
      ['ORD-2', 'K|2', '99ROC'],
    ]);
    const orl = parsed(segments('MSH|^~\\&|ANALYZER||LABGATE||20241105101501||ORL^O34^ORL_O34|5|P|2.5.1', 'MSA|AA|W-1'));
    expect(acceptsWorkOrder(orl, readHeader(orl), 'W-1')).toBe(true);
    expect(acceptsWorkOrder(orl, readHeader(orl), 'W-2')).toBe(false);
  });
});
