// The records labgate sends an analyzer (LIS2-A2): H, then P and O per specimen, then L, as values that the one ASTM
// encoder (encode.ts) writes in the instrument's charset with the message's delimiters. An answer to a query uses the
// delimiters of the query's own H record, so the analyzer reads it as it writes; a download the standard's. Patient
// data enters the P record only when the instrument's options ask for it.
import { keepWritable, type OrderAnswer } from '../../src/orders/answer.js';
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { offsetMs } from '../../src/zoned-time.js';
import type { Delimiters } from './delimiters.js';
import { writesExactly, type FieldValue, type RecordValue } from './encode.js';
import type { AstmOptions } from './options.js';
import { componentsForCode } from './test-code.js';

/** What every record of one outgoing message needs. */
export interface OutgoingContext {
  delimiters: Delimiters;
  /** H.10 receiver id: the analyzer's own H.5 sender name, echoed; empty for a download. */
  receiver: string;
  /** Epoch ms the message is composed (H.14), written in the analyzer's clock zone. */
  at: number;
  timezone: string;
  options: Pick<AstmOptions, 'accession' | 'codeComponents' | 'codePick' | 'codeJoin' | 'orders' | 'charset'>;
}

/** `query`: O.26 `Q` (response to query); `download`: O.26 `O` (order record). LIS2-A2 O.26 report types. */
export type OrderPurpose = 'query' | 'download';

/** An answer or download carrying orders: H, P and O per specimen, L with the configured termination code. */
export function ordersMessage(specimens: readonly InstrumentSpecimen[], purpose: OrderPurpose, ctx: OutgoingContext): RecordValue[] {
  const records = [header(ctx)];
  specimens.forEach((s, i) => records.push(patient(i + 1, s, ctx), order(s, purpose, ctx)));
  records.push(terminator(ctx.options.orders.terminationCode));
  return records;
}

/**
 * "No information" as the instrument's options name it: H and `L|1|I` (LIS2-A2 L.3), or an O record per named
 * specimen with the configured action code and report type `Y` (no order on record, in response to a query), or
 * nothing at all (null).
 */
export function noInformationMessage(accessions: readonly string[], ctx: OutgoingContext): RecordValue[] | null {
  const variant = ctx.options.orders.noInformation;
  if (variant.answer === 'none') return null;
  const records = [header(ctx)];
  if (variant.answer === 'order' && accessions.length > 0) {
    accessions.forEach((accession, i) => {
      const empty: InstrumentSpecimen = { accession, orders: [], patient: null };
      records.push(patient(i + 1, empty, ctx), order(empty, 'query', ctx, variant.actionCode, 'Y'));
    });
    records.push(terminator('N'));
  } else {
    records.push(terminator('I'));
  }
  return records;
}

/**
 * The answer without the specimens whose identifiers (accession, test codes, patient id when sent) the instrument
 * cannot be sent exactly (encode.ts writesExactly): a replaced character would name another specimen or test. An
 * answer left with no specimen is "no information" (`not-expressible`). `leftOut` counts the specimens left out.
 */
export function writableAnswer(answer: OrderAnswer, ctx: OutgoingContext): { answer: OrderAnswer; leftOut: number } {
  const idsOf = (s: InstrumentSpecimen): string[] => [
    s.accession,
    ...s.orders.flatMap((o) => componentsForCode(o.analyzerCode, ctx.options)),
    ...(ctx.options.orders.patient && s.patient ? [s.patient.id] : []),
  ];
  return keepWritable(answer, idsOf, (value) => writesExactly(value, ctx.delimiters, ctx.options.charset));
}

// H.5 sender, H.10 receiver, H.12 processing id P (production), H.13 version 1, H.14 date and time of message.
function header(ctx: OutgoingContext): RecordValue {
  return { type: 'H', fields: ['', '', 'labgate', '', '', '', '', ctx.receiver, '', 'P', '1', timestamp(ctx.at, ctx.timezone)].map(one) };
}

// P.3 practice-assigned patient id, P.6 name (last^first; the LIMS's name goes in whole), P.8 birth date, P.9 sex.
function patient(sequence: number, s: InstrumentSpecimen, ctx: OutgoingContext): RecordValue {
  const f: FieldValue[] = [one(String(sequence))];
  const p = ctx.options.orders.patient ? s.patient : null;
  if (p) Object.assign(f, { 1: one(p.id), 4: one(p.name), 6: one(p.birthDate.replace(/-/g, '')), 7: one(p.sex) });
  place(f, 'P', s.accession, ctx);
  return { type: 'P', fields: filled(f) };
}

// O.3 specimen id (unless configured elsewhere), O.5 universal test ids (repeats), O.6 priority (S stat, R routine),
// O.7 requested date/time, O.12 action code, O.26 report type.
function order(
  s: InstrumentSpecimen,
  purpose: OrderPurpose,
  ctx: OutgoingContext,
  actionCode: string = ctx.options.orders.actionCode,
  reportType?: string,
): RecordValue {
  const f: FieldValue[] = [one('1')];
  if (!place(f, 'O', s.accession, ctx)) f[1] = one(s.accession);
  f[3] = s.orders.map((o) => componentsForCode(o.analyzerCode, ctx.options));
  if (s.orders.length > 0) f[4] = one(s.orders.some((o) => o.priority === 'stat') ? 'S' : 'R');
  const requested = Math.min(...s.orders.map((o) => Date.parse(o.orderedAt)).filter(Number.isFinite));
  if (Number.isFinite(requested)) f[5] = one(timestamp(requested, ctx.timezone));
  f[10] = one(actionCode);
  f[24] = one(reportType ?? (purpose === 'query' ? 'Q' : 'O'));
  return { type: 'O', fields: filled(f) };
}

function terminator(code: string): RecordValue {
  return { type: 'L', fields: [one('1'), one(code)] };
}

/**
 * Puts the accession where the instrument reads it (options.accession) when that is a field of `record`; `f` holds
 * fields from number 2 on. Returns whether it did.
 */
function place(f: FieldValue[], record: 'O' | 'P', accession: string, ctx: OutgoingContext): boolean {
  const { segment: where, field, component = 1 } = ctx.options.accession;
  if (where !== record) return false;
  const parts = [...(f[field - 2]?.[0] ?? [])];
  while (parts.length < component) parts.push('');
  parts[component - 1] = accession;
  f[field - 2] = [parts];
  return true;
}

function one(value: string): FieldValue {
  return [[value]];
}

/** Holes filled with empty fields. */
function filled(f: readonly (FieldValue | undefined)[]): FieldValue[] {
  return Array.from({ length: f.length }, (_, i) => f[i] ?? one(''));
}

/** LIS2-A2 6.6.2: YYYYMMDDHHMMSS in the analyzer's clock zone. */
export function timestamp(at: number, zone: string): string {
  return new Date(at + offsetMs(at, zone)).toISOString().replace(/\D/g, '').slice(0, 14);
}
