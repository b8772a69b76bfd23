// HL7 host queries → the protocol-neutral OrderQuery, in the two dialects analyzers send:
// - QRY^Q02 (v2.3.1 Chapter 2 original-mode display query, as Mindray's BS and BC series send it): QRD-8, the "who"
//   subject filter, names the sample barcode (one per repetition); QRD-9 (`OTH`) says what is asked; the answer is
//   QCK^Q02, then DSR^Q03 with the orders.
// - QBP^Q11 (IHE LAW, query for a work order step): QPD-1 names the query (`WOS`), QPD-2 is its tag, QPD-3 the
//   container (specimen) id; the answer is RSP^K11.
// A query never throws: what it cannot say is data.
import type { OrderQuery } from '../../src/orders/order.js';
import type { MessageHeader } from './header.js';
import { unescapeText } from './escape.js';
import { componentsOf, rawField, repetitionsOf, valueAt, type Hl7Message } from './parse.js';

/** The query dialects labgate reads, named by the message that asks. */
export type QueryDialect = 'QRY^Q02' | 'QBP^Q11';

/** The dialect of a message by MSH-9, or undefined when it is not a host query. */
export function queryDialect(header: Pick<MessageHeader, 'messageType' | 'triggerEvent'>): QueryDialect | undefined {
  if (header.messageType === 'QRY' && (header.triggerEvent === 'Q02' || header.triggerEvent === '')) return 'QRY^Q02';
  if (header.messageType === 'QBP' && header.triggerEvent === 'Q11') return 'QBP^Q11';
  return undefined;
}

/** Reads one host query; `unsupported` when the message names no specimen. */
export function readHl7Query(message: Hl7Message, dialect: QueryDialect): OrderQuery {
  const d = message.delimiters;
  const seg = message.segments.find((s) => s.id === (dialect === 'QRY^Q02' ? 'QRD' : 'QPD'));
  const field = dialect === 'QRY^Q02' ? 8 : 3;
  const ids = seg === undefined ? [] : repetitionsOf(rawField(seg, field), d).map((rep) => unescapeText(componentsOf(rep, d)[0] ?? '', d).trim());
  const named = [...new Set(ids.filter((id) => id !== ''))];
  const requestCode =
    seg === undefined
      ? ''
      : valueAt(seg, d, dialect === 'QRY^Q02' ? { field: 9, component: 1 } : { field: 1, component: 1 })
          .trim()
          .toUpperCase();
  return {
    specimens: named.map((accession) => ({ kind: 'id', accession })),
    tests: 'all',
    request: named.length === 0 ? 'unsupported' : 'orders',
    requestCode,
  };
}
