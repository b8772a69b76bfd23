// The IHE LAW dialect's order messages (v2.5.1): RSP^K11 answers a QBP^Q11 query for a work order step (QAK-1 the
// query's tag, QAK-2 OK when a work order follows, NF when there is none, QPD echoed), and OML^O33 carries one
// specimen's work order (SPM, SAC, then per test ORC, TQ1 priority and OBR with the analyzer's own code), answered by
// the analyzer with ORL^O34. Pure: segments only, written by encode.ts with the delimiters and charset given.
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { replyHeader } from './ack.js';
import { acceptsMessage } from './accepted.js';
import { components, text, type SegmentValue } from './encode.js';
import { unescapeText } from './escape.js';
import type { MessageHeader } from './header.js';
import { fieldValues, rawField, type Hl7Message } from './parse.js';

/** The RSP^K11 to a QBP^Q11: `found` says whether an OML^O33 with the work order follows. */
export function queryResponse(query: Hl7Message, header: MessageHeader, found: boolean, now: number, sendingApplication: string): SegmentValue[] {
  const qpd = query.segments.find((s) => s.id === 'QPD');
  const d = query.delimiters;
  const tag = qpd === undefined ? '' : unescapeText(rawField(qpd, 2), d);
  return [
    replyHeader(header, components('RSP', 'K11', 'RSP_K11'), header.controlId, now, sendingApplication),
    { id: 'MSA', fields: [text('AA'), text(header.controlId)] },
    { id: 'QAK', fields: [text(tag), text(found ? 'OK' : 'NF')] },
    ...(qpd === undefined ? [] : [{ id: 'QPD', fields: qpd.fields.slice(1).map((raw) => fieldValues(raw, d)) }]),
  ];
}

/** Who labgate is to the analyzer, and what the analyzer calls itself, for an unsolicited OML^O33. */
export interface WorkOrderAddress {
  sendingApplication: string;
  receivingApplication: string;
  /** MSH-10 of this message; the analyzer's ORL^O34 echoes it in MSA-2. */
  controlId: string;
  /** What the analyzer calls the specimen type (SPM-4), as the LIMS or the instrument's options say. */
  specimenType: string;
  /** The coding system of the analyzer's test codes in OBR-4 (its reverse mapping), e.g. `99ROC`. */
  codingSystem: string;
  /** Send the patient's demographics (options.orders.patient); otherwise PID holds nothing but its set id. */
  patient: boolean;
}

/** One specimen's work order as an OML^O33 (IHE LAW LAB-28): ORC `NW` per test, TQ1-9 `S` for a stat test. */
export function workOrder(specimen: InstrumentSpecimen, address: WorkOrderAddress, now: number): SegmentValue[] {
  const header: MessageHeader = {
    sendingApplication: address.receivingApplication,
    sendingFacility: '',
    receivingApplication: address.sendingApplication,
    receivingFacility: '',
    messageType: 'OML',
    triggerEvent: 'O33',
    controlId: address.controlId,
    processingId: 'P',
    version: '2.5.1',
    acceptAckType: '',
    applicationAckType: '',
  };
  const msh = replyHeader(header, components('OML', 'O33', 'OML_O33'), address.controlId, now, address.sendingApplication);
  const p = address.patient ? specimen.patient : null;
  const pid: SegmentValue = {
    id: 'PID',
    fields: [text('1'), text(''), text(p?.id ?? ''), text(''), text(p?.name ?? ''), text(''), text(p?.birthDate.replaceAll('-', '') ?? ''), text(p?.sex ?? '')],
  };
  const orders = specimen.orders.flatMap((o, i): SegmentValue[] => [
    { id: 'ORC', fields: [text('NW'), text(o.orderId)] },
    { id: 'TQ1', fields: [text(String(i + 1)), text(''), text(''), text(''), text(''), text(''), text(''), text(''), text(o.priority === 'stat' ? 'S' : 'R')] },
    { id: 'OBR', fields: [text(String(i + 1)), text(o.orderId), text(''), components(o.analyzerCode, '', address.codingSystem)] },
  ]);
  return [
    // MSH-15 AL, MSH-16 AL: the analyzer accepts and then answers the order (ORL^O34), as LAB-28 asks.
    { ...msh, fields: [...msh.fields, text(''), text(''), text('AL'), text('AL'), text(''), text(''), text(''), text(''), components('LAB-28', 'IHE')] },
    pid,
    { id: 'SPM', fields: [text('1'), [[[specimen.accession]]], text(''), text(address.specimenType)] },
    { id: 'SAC', fields: [text(''), text(''), text(specimen.accession)] },
    ...orders,
  ];
}

/** Whether a message is the analyzer's ORL^O34 (or a plain ACK) accepting the work order with `controlId`. */
export function acceptsWorkOrder(message: Hl7Message, header: MessageHeader, controlId: string): boolean {
  return acceptsMessage(message, header, ['ORL', 'ACK'], controlId);
}
