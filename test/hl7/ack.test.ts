import { describe, expect, test } from 'vitest';
import { acknowledgmentCodes, ackSegments, versionAtLeast, type AckCode, type AckOutcome } from '../../drivers/hl7/ack.js';
import type { Delimiters } from '../../drivers/hl7/delimiters.js';
import { encodeMessage } from '../../drivers/hl7/encode.js';
import type { MessageHeader } from '../../drivers/hl7/header.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';

const header = (accept = '', application = '', version = '2.5'): MessageHeader => ({
  sendingApplication: 'ANALYZER',
  sendingFacility: 'LAB',
  receivingApplication: 'LIS',
  receivingFacility: 'HOSP',
  messageType: 'ORU',
  triggerEvent: 'R01',
  controlId: 'MSG-1',
  processingId: 'P',
  version,
  acceptAckType: accept,
  applicationAckType: application,
});
/** The ACK's text as the encoder writes it (Latin-1). */
function buildAck(h: MessageHeader, d: Delimiters, code: AckCode, reasons: string[], now: number, app: string): string {
  const encoded = encodeMessage(ackSegments(h, code, reasons, now, app), d, 'latin1');
  if (encoded.kind !== 'encoded') throw new Error(encoded.reason);
  return encoded.payload.toString('latin1');
}

const committed: AckOutcome = { kind: 'committed', results: 2, rejections: [] };
const partial: AckOutcome = { kind: 'committed', results: 1, rejections: [{ reason: 'unmapped test code' }] };
const nothing: AckOutcome = { kind: 'committed', results: 0, rejections: [{ reason: 'not an HL7 message' }] };
const unavailable: AckOutcome = { kind: 'unavailable', reason: 'disk full' };
const refused: AckOutcome = { kind: 'refused', reason: 'too large' };

describe('which acknowledgments (2.9.2 original, 2.9.3 enhanced)', () => {
  test.each([
    { mode: 'original', accept: '', app: '', outcome: committed, want: ['AA'] },
    { mode: 'original', accept: '', app: '', outcome: partial, want: ['AE'] },
    { mode: 'original', accept: '', app: '', outcome: nothing, want: ['AE'] },
    { mode: 'original', accept: '', app: '', outcome: unavailable, want: ['AR'] },
    { mode: 'original', accept: '', app: '', outcome: refused, want: ['AR'] },
    { mode: 'Mindray result type in MSH-16 is not Table 0155', accept: '', app: '2', outcome: committed, want: ['AA'] },
    { mode: 'enhanced AL/AL', accept: 'AL', app: 'AL', outcome: committed, want: ['CA', 'AA'] },
    { mode: 'enhanced AL/NE', accept: 'AL', app: 'NE', outcome: committed, want: ['CA'] },
    { mode: 'enhanced NE/AL', accept: 'NE', app: 'AL', outcome: partial, want: ['AE'] },
    { mode: 'enhanced AL/ER success', accept: 'AL', app: 'ER', outcome: committed, want: ['CA'] },
    { mode: 'enhanced AL/ER error', accept: 'AL', app: 'ER', outcome: partial, want: ['CA', 'AE'] },
    { mode: 'enhanced AL/SU error', accept: 'AL', app: 'SU', outcome: partial, want: ['CA'] },
    { mode: 'enhanced ER/AL success', accept: 'ER', app: 'AL', outcome: committed, want: ['AA'] },
    { mode: 'enhanced AL/AL store down', accept: 'AL', app: 'AL', outcome: unavailable, want: ['CE'] },
    { mode: 'enhanced SU/AL store down', accept: 'SU', app: 'AL', outcome: unavailable, want: ['AR'] },
    { mode: 'enhanced AL/AL too large', accept: 'AL', app: 'AL', outcome: refused, want: ['CR'] },
  ])('$mode → $want', ({ accept, app, outcome, want }) => {
    expect(acknowledgmentCodes(header(accept, app), outcome, 'AE')).toEqual(want);
  });

  test('partialRejectionAck AA accepts a message with some stored results, never one with none', () => {
    expect(acknowledgmentCodes(header(), partial, 'AA')).toEqual(['AA']);
    expect(acknowledgmentCodes(header(), nothing, 'AA')).toEqual(['AE']);
  });

  test('no accepting code without a commit, whatever the modes', () => {
    for (const accept of ['', 'AL', 'NE', 'ER', 'SU']) {
      for (const app of ['', 'AL', 'NE', 'ER', 'SU']) {
        for (const outcome of [unavailable, refused]) {
          const codes = acknowledgmentCodes(header(accept, app), outcome, 'AA');
          expect(codes.filter((c) => c === 'AA' || c === 'CA')).toEqual([]);
        }
      }
    }
  });
});

describe('the ACK message', () => {
  test('AA mirrors the encoding characters, echoes MSH-10 and swaps sender and receiver', () => {
    const d = { field: '#', component: '!', repetition: '@', escape: '$', subcomponent: '%' };
    const ack = buildAck(header(), d, 'AA', [], Date.UTC(2024, 9, 29, 12, 0, 0), 'LABGATE');
    expect(ack).toBe('MSH#!@$%#LABGATE#HOSP#ANALYZER#LAB#20241029120000+0000##ACK!R01!ACK#AMSG-1#P#2.5\rMSA#AA#MSG-1\r');
  });

  test('AE carries MSA-3 and a v2.5 ERR with the reason, escaped', () => {
    const d = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };
    const ack = buildAck(header(), d, 'AE', ["GLU: unit 'mg|dL' differs"], 0, 'LABGATE');
    const parsed = parseMessage(ack);
    if (parsed.kind !== 'message') throw new Error('ack does not parse');
    const [, msa, err] = parsed.message.segments;
    expect(valueAt(msa!, d, { field: 1, component: 1, subcomponent: 1 })).toBe('AE');
    expect(valueAt(msa!, d, { field: 3, component: 1, subcomponent: 1 })).toBe("GLU: unit 'mg|dL' differs");
    expect(valueAt(err!, d, { field: 3, component: 1, subcomponent: 1 })).toBe('207');
    expect(valueAt(err!, d, { field: 4, component: 1, subcomponent: 1 })).toBe('E');
    expect(valueAt(err!, d, { field: 8, component: 1, subcomponent: 1 })).toBe("GLU: unit 'mg|dL' differs");
  });

  test('before v2.5 the error code sits in ERR-1 and MSH-9 has no structure component before v2.3.1', () => {
    const d = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };
    const ack = buildAck(header('', '', '2.3'), d, 'AR', ['store unavailable'], 0, 'LABGATE');
    expect(ack).toContain('|ACK^R01|');
    expect(ack).toContain('\rERR|^^^207&Application internal error&HL70357\r');
  });

  test('versions compare numerically', () => {
    expect(versionAtLeast('2.5.1', '2.5')).toBe(true);
    expect(versionAtLeast('2.3', '2.3.1')).toBe(false);
    expect(versionAtLeast('2.10', '2.9')).toBe(true);
  });
});
