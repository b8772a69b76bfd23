// LIS2-A2 request information (Q) records → the protocol-neutral OrderQuery. Q.3 names the specimens (one or several
// repeats, the specimen id in a configured component, `ALL`), Q.4 the end of a range, Q.5 the tests (`^^^ALL` or the
// analyzer's codes, read as R.3 is), Q.13 what is asked for. A Q record never throws: what it cannot say is data.
import type { OrderQuery, SpecimenSelector } from '../../src/orders/order.js';
import type { AstmOptions } from './options.js';
import { rawField, unescape, type AstmRecord } from './records.js';
import { codeFromComponents } from './test-code.js';

/**
 * LIS2-A2 11.1.13 request information status codes: `O` test orders and demographics only, `D` demographics only
 * (answered with what the LIMS holds, orders included), `A` cancel the last request; empty asks for orders as most
 * analyzers send it. Every other code asks for results (C, P, F, X, I, S, M, R, N), which a gateway does not hold.
 */
function requestOf(code: string): OrderQuery['request'] {
  if (code === '' || code === 'O' || code === 'D') return 'orders';
  return code === 'A' ? 'cancel' : 'unsupported';
}

/** One Q record read with the instrument's options. */
export function readQuery(record: AstmRecord, options: Pick<AstmOptions, 'orders' | 'codeComponents' | 'codePick' | 'codeJoin'>): OrderQuery {
  const requestCode = unescape(rawField(record, 13), record.delimiters).trim().toUpperCase();
  const { specimens, unread } = specimensOf(record, options.orders.specimenComponent, options.orders.maxSpecimensPerQuery);
  return { specimens, tests: testsOf(record, options), request: requestOf(requestCode), requestCode, ...(unread > 0 ? { unread } : {}) };
}

/**
 * Q.3 (and Q.4) as selectors. Past `max` distinct ids the repeats are counted, not read (a Q record of a million
 * repeats must not cost a million ids), except that an `ALL` among them still asks for every pending specimen.
 */
function specimensOf(record: AstmRecord, component: number, max: number): { specimens: SpecimenSelector[]; unread: number } {
  const d = record.delimiters;
  const idIn = (repeat: string): string => unescape(repeat.split(d.component)[component - 1] ?? '', d).trim();
  const all = { specimens: [{ kind: 'all' as const }], unread: 0 };
  const start = rawField(record, 3);
  // `ALL` as the whole field (only a short field can be that: a long one is not upper-cased whole to find out).
  if (start.length <= 16 && isAll(unescape(start, d))) return all;
  const named = new Set<string>();
  let unread = 0;
  for (let from = 0; from <= start.length;) {
    const at = start.indexOf(d.repeat, from);
    const end = at < 0 ? start.length : at;
    const repeat = start.slice(from, end);
    from = end + 1;
    if (named.size >= max && !/all/i.test(repeat)) {
      if (repeat !== '') unread += 1;
      continue;
    }
    const id = idIn(repeat);
    if (isAll(id)) return all;
    if (id !== '' && named.size < max) named.add(id);
    else if (id !== '' && !named.has(id)) unread += 1;
  }
  // LIS2-A2 11.1.4: an ending range id makes Q.3 the start of a range (a single start only).
  const last = rawField(record, 4)
    .split(d.repeat)
    .map(idIn)
    .find((id) => id !== '');
  const [first] = named;
  if (last !== undefined && named.size === 1 && unread === 0 && last !== first) return { specimens: [{ kind: 'range', from: first!, to: last }], unread };
  return { specimens: [...named].map((accession) => ({ kind: 'id', accession })), unread };
}

/** Test codes one query is read for: far more than any analyzer's menu; the rest of a longer Q.5 is not read. */
export const MAX_QUERY_TESTS = 1_000;

function testsOf(record: AstmRecord, options: Pick<AstmOptions, 'codeComponents' | 'codePick' | 'codeJoin'>): OrderQuery['tests'] {
  const d = record.delimiters;
  const field = rawField(record, 5);
  const codes = new Set<string>();
  for (let from = 0; from <= field.length && codes.size < MAX_QUERY_TESTS;) {
    const at = field.indexOf(d.repeat, from);
    const end = at < 0 ? field.length : at;
    const code = codeFromComponents(
      field
        .slice(from, end)
        .split(d.component)
        .map((c) => unescape(c, d)),
      options,
    );
    from = end + 1;
    if (isAll(code)) return 'all';
    if (code !== '') codes.add(code);
  }
  return codes.size === 0 ? 'all' : [...codes];
}

function isAll(text: string): boolean {
  return text.trim().toUpperCase() === 'ALL';
}
