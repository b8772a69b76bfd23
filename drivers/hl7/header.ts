// MSH fields the driver acts on (HL7 v2.5.1 Chapter 2, MSH segment definition).
import type { Hl7Message, Segment } from './parse.js';
import { valueAt } from './parse.js';

/** The MSH of one message, unescaped. */
export interface MessageHeader {
  sendingApplication: string;
  sendingFacility: string;
  receivingApplication: string;
  receivingFacility: string;
  /** MSH-9.1 and MSH-9.2, e.g. `ORU` and `R01`. */
  messageType: string;
  triggerEvent: string;
  /** MSH-10: echoed in MSA-2. */
  controlId: string;
  processingId: string;
  version: string;
  /** MSH-15 and MSH-16 (HL7 Table 0155: AL, NE, ER, SU); '' when absent. */
  acceptAckType: string;
  applicationAckType: string;
}

/** Reads the MSH (always the first segment once parsed). */
export function readHeader(message: Hl7Message): MessageHeader {
  const msh = message.segments[0] as Segment;
  const d = message.delimiters;
  const at = (field: number, component = 1): string => valueAt(msh, d, { field, component, subcomponent: 1 }).trim();
  return {
    sendingApplication: at(3),
    sendingFacility: at(4),
    receivingApplication: at(5),
    receivingFacility: at(6),
    messageType: at(9).toUpperCase(),
    triggerEvent: at(9, 2).toUpperCase(),
    controlId: at(10),
    processingId: at(11),
    version: at(12),
    acceptAckType: at(15).toUpperCase(),
    applicationAckType: at(16).toUpperCase(),
  };
}
