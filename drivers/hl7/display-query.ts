// The answers of the HL7 v2.3.1 display-query dialect (Chapter 2 original-mode query, as Mindray's BS and BC host
// interface manuals define it): a QRY^Q02 is answered at once by QCK^Q02 (QAK-2 OK when orders follow, NF when there
// are none, and then nothing follows); then DSR^Q03 carries the specimen's patient and tests in DSP segments, one
// value per DSP (DSP-1 its position, DSP-3 the value), and the analyzer answers it with ACK^Q03. Pure: segments only,
// written by encode.ts with the query's own delimiters and the instrument's charset.
import type { InstrumentSpecimen, Patient } from '../../src/orders/order.js';
import { replyHeader } from './ack.js';
import { components, text, type FieldValue, type SegmentValue } from './encode.js';
import type { Delimiters } from './delimiters.js';
import type { MessageHeader } from './header.js';
import { fieldValues, type Hl7Message, type Segment } from './parse.js';
import { acceptsMessage } from './accepted.js';

/** DSP positions of the dialect's display record: patient lines first, the sample's from 21, one test per line from 29. */
export const displayPositions = {
  patientId: 1,
  patientName: 3,
  birthDate: 4,
  sex: 5,
  sampleBarcode: 21,
  sampleId: 22,
  sampleTime: 23,
  stat: 24,
  sampleType: 26,
  firstTest: 29,
} as const;

/** The QCK^Q02 that acknowledges a query at once: QAK-2 `OK` when a DSR^Q03 follows, `NF` when nothing was found. */
export function queryAcknowledgment(header: MessageHeader, found: boolean, now: number, sendingApplication: string): SegmentValue[] {
  return [
    replyHeader(header, components('QCK', 'Q02'), header.controlId, now, sendingApplication),
    { id: 'MSA', fields: [text('AA'), text(header.controlId), text('Message accepted'), text(''), text(''), text('0')] },
    { id: 'ERR', fields: [text('0')] },
    { id: 'QAK', fields: [text('SR'), text(found ? 'OK' : 'NF')] },
  ];
}

/** What a display response carries beside the orders: the sample's type and time, as the LIMS or the query said. */
export interface DisplayDetails {
  sampleType: string;
  /** HL7 DTM of the sample's collection, or ''. */
  sampleTime: string;
  /** Send the patient's demographics (options.orders.patient); otherwise the patient lines stay empty. */
  patient: boolean;
}

/**
 * The DSR^Q03 with one specimen's orders: the query's QRD and QRF echoed as received, then the DSP lines 1 to the last
 * test. A test is `analyzerCode^^^`; a stat order makes the sample stat (DSP-24 `Y`).
 */
export function displayResponse(
  query: Hl7Message,
  header: MessageHeader,
  specimen: InstrumentSpecimen,
  details: DisplayDetails,
  controlId: string,
  now: number,
  sendingApplication: string,
): SegmentValue[] {
  const echo = (id: string): SegmentValue[] => query.segments.filter((s) => s.id === id).map((s) => echoed(s, query.delimiters));
  const values = new Map<number, FieldValue>();
  const patient: Patient | null = details.patient ? specimen.patient : null;
  if (patient !== null) {
    values.set(displayPositions.patientId, text(patient.id));
    values.set(displayPositions.patientName, text(patient.name));
    values.set(displayPositions.birthDate, text(patient.birthDate.replaceAll('-', '')));
    values.set(displayPositions.sex, text(patient.sex));
  }
  values.set(displayPositions.sampleBarcode, text(specimen.accession));
  values.set(displayPositions.sampleTime, text(details.sampleTime));
  values.set(displayPositions.stat, text(specimen.orders.some((o) => o.priority === 'stat') ? 'Y' : 'N'));
  values.set(displayPositions.sampleType, text(details.sampleType));
  specimen.orders.forEach((o, i) => values.set(displayPositions.firstTest + i, components(o.analyzerCode, '', '', '')));
  const last = displayPositions.firstTest + specimen.orders.length - 1;
  const dsp: SegmentValue[] = Array.from({ length: last }, (_, i) => ({
    id: 'DSP',
    fields: [text(String(i + 1)), text(''), values.get(i + 1) ?? text(''), text(''), text('')],
  }));
  return [
    replyHeader(header, components('DSR', 'Q03'), controlId, now, sendingApplication),
    { id: 'MSA', fields: [text('AA'), text(header.controlId), text('Message accepted'), text(''), text(''), text('0')] },
    { id: 'ERR', fields: [text('0')] },
    { id: 'QAK', fields: [text('SR'), text('OK')] },
    ...echo('QRD'),
    ...echo('QRF'),
    ...dsp,
    { id: 'DSC', fields: [text('')] },
  ];
}

/** Whether a message is the analyzer's ACK^Q03 accepting the display response with `controlId`. */
export function acceptsDisplay(message: Hl7Message, header: MessageHeader, controlId: string): boolean {
  return acceptsMessage(message, header, ['ACK'], controlId);
}

// A segment of the query written back as it came: its values unescaped, to be escaped again by the encoder.
function echoed(segment: Segment, d: Delimiters): SegmentValue {
  return { id: segment.id, fields: segment.fields.slice(1).map((raw) => fieldValues(raw, d)) };
}
