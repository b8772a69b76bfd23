// The records labgate sends an analyzer (LIS2-A2): H, then P and O per specimen, then L. An answer to a query is
// written with the delimiters of the query's own H record, so the analyzer reads it as it writes; a download with the
// standard's. Data is escaped (LIS2-A2 7.1.5) and stripped of control characters, so no value can end a record or
// shift a field. Patient data enters the P record only when the instrument's options ask for it.
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import { offsetMs } from '../../src/zoned-time.js';
import type { Delimiters } from './delimiters.js';
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
  options: Pick<AstmOptions, 'accession' | 'codeComponents' | 'codePick' | 'codeJoin' | 'orders'>;
}

/** `query`: O.26 `Q` (response to query); `download`: O.26 `O` (order record). LIS2-A2 O.26 report types. */
export type OrderPurpose = 'query' | 'download';

/** An answer or download carrying orders: H, P and O per specimen, L with the configured termination code. */
export function ordersMessage(specimens: readonly InstrumentSpecimen[], purpose: OrderPurpose, ctx: OutgoingContext): string {
  const records = [header(ctx)];
  specimens.forEach((s, i) => records.push(patient(i + 1, s, ctx), order(s, purpose, ctx)));
  records.push(terminator(ctx.options.orders.terminationCode, ctx));
  return records.map((r) => r + '\r').join('');
}

/**
 * "No information" as the instrument's options name it: H and `L|1|I` (LIS2-A2 L.3), or an O record per named
 * specimen with the configured action code and report type `Y` (no order on record, in response to a query), or
 * nothing at all (null).
 */
export function noInformationMessage(accessions: readonly string[], ctx: OutgoingContext): string | null {
  const variant = ctx.options.orders.noInformation;
  if (variant.answer === 'none') return null;
  const records = [header(ctx)];
  if (variant.answer === 'order' && accessions.length > 0) {
    accessions.forEach((accession, i) => {
      const empty: InstrumentSpecimen = { accession, orders: [], patient: null };
      records.push(patient(i + 1, empty, ctx), order(empty, 'query', ctx, variant.actionCode, 'Y'));
    });
    records.push(terminator('N', ctx));
  } else {
    records.push(terminator('I', ctx));
  }
  return records.map((r) => r + '\r').join('');
}

function header(ctx: OutgoingContext): string {
  const d = ctx.delimiters;
  const definition = d.repeat + d.component + (d.escape ?? '');
  // H.5 sender, H.10 receiver, H.12 processing id P (production), H.13 version 1, H.14 date and time of message.
  return (
    'H' + d.field + definition + d.field + fields(['', '', 'labgate', '', '', '', '', text(ctx.receiver, d), '', 'P', '1', timestamp(ctx.at, ctx.timezone)], d)
  );
}

function patient(sequence: number, s: InstrumentSpecimen, ctx: OutgoingContext): string {
  const d = ctx.delimiters;
  const f: string[] = [String(sequence)];
  const p = ctx.options.orders.patient ? s.patient : null;
  // P.3 practice-assigned patient id, P.6 name (last^first; the LIMS's name goes in whole), P.8 birth date, P.9 sex.
  if (p) Object.assign(f, { 1: text(p.id, d), 4: text(p.name, d), 6: p.birthDate.replace(/-/g, ''), 7: p.sex });
  place(f, 'P', s.accession, ctx);
  return 'P' + d.field + fields(f, d);
}

function order(
  s: InstrumentSpecimen,
  purpose: OrderPurpose,
  ctx: OutgoingContext,
  actionCode: string = ctx.options.orders.actionCode,
  reportType?: string,
): string {
  const d = ctx.delimiters;
  const f: string[] = ['1'];
  if (!place(f, 'O', s.accession, ctx)) f[1] = text(s.accession, d);
  // O.5 universal test ids (repeats), O.6 priority (S stat, R routine), O.7 requested date/time, O.12 action code.
  f[3] = s.orders
    .map((o) =>
      componentsForCode(o.analyzerCode, ctx.options)
        .map((c) => text(c, d))
        .join(d.component),
    )
    .join(d.repeat);
  if (s.orders.length > 0) f[4] = s.orders.some((o) => o.priority === 'stat') ? 'S' : 'R';
  const requested = Math.min(...s.orders.map((o) => Date.parse(o.orderedAt)).filter(Number.isFinite));
  if (Number.isFinite(requested)) f[5] = timestamp(requested, ctx.timezone);
  f[10] = actionCode;
  f[24] = reportType ?? (purpose === 'query' ? 'Q' : 'O');
  return 'O' + d.field + fields(f, d);
}

function terminator(code: string, ctx: OutgoingContext): string {
  return 'L' + ctx.delimiters.field + '1' + ctx.delimiters.field + code;
}

/**
 * Puts the accession where the instrument reads it (options.accession) when that is a field of `record`; `f` holds
 * fields from number 2 on. Returns whether it did.
 */
function place(f: string[], record: 'O' | 'P', accession: string, ctx: OutgoingContext): boolean {
  const { segment: where, field, component = 1 } = ctx.options.accession;
  if (where !== record) return false;
  const d = ctx.delimiters;
  const parts = (f[field - 2] ?? '').split(d.component);
  while (parts.length < component) parts.push('');
  parts[component - 1] = text(accession, d);
  f[field - 2] = parts.join(d.component);
  return true;
}

/** Fields 2.. joined, holes filled, trailing empty fields dropped. */
function fields(f: readonly (string | undefined)[], d: Delimiters): string {
  const all = Array.from({ length: f.length }, (_, i) => f[i] ?? '');
  while (all.length > 0 && all[all.length - 1] === '') all.pop();
  return all.join(d.field);
}

/** LIS2-A2 7.1.5: delimiters in data as escape sequences; control characters (CR would end the record) as spaces. */
export function text(value: string, d: Delimiters): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  const e = d.escape;
  if (e === null) return [...clean].filter((c) => c !== d.field && c !== d.component && c !== d.repeat).join('');
  const codes = new Map([
    [e, 'E'],
    [d.field, 'F'],
    [d.component, 'S'],
    [d.repeat, 'R'],
  ]);
  return [...clean].map((c) => (codes.has(c) ? `${e}${codes.get(c)!}${e}` : c)).join('');
}

/** LIS2-A2 6.6.2: YYYYMMDDHHMMSS in the analyzer's clock zone. */
export function timestamp(at: number, zone: string): string {
  return new Date(at + offsetMs(at, zone)).toISOString().replace(/\D/g, '').slice(0, 14);
}
