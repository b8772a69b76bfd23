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
  return { specimens: specimensOf(record, options.orders.specimenComponent), tests: testsOf(record, options), request: requestOf(requestCode), requestCode };
}

function specimensOf(record: AstmRecord, component: number): SpecimenSelector[] {
  const d = record.delimiters;
  const idIn = (repeat: string): string => unescape(repeat.split(d.component)[component - 1] ?? '', d).trim();
  const start = rawField(record, 3);
  if (isAll(unescape(start, d))) return [{ kind: 'all' }];
  const ids = start.split(d.repeat).map(idIn);
  if (ids.some(isAll)) return [{ kind: 'all' }];
  const named = ids.filter((id) => id !== '');
  // LIS2-A2 11.1.4: an ending range id makes Q.3 the start of a range (a single start only).
  const end = rawField(record, 4)
    .split(d.repeat)
    .map(idIn)
    .find((id) => id !== '');
  if (end !== undefined && named.length === 1 && end !== named[0]) return [{ kind: 'range', from: named[0]!, to: end }];
  return [...new Set(named)].map((accession) => ({ kind: 'id', accession }));
}

function testsOf(record: AstmRecord, options: Pick<AstmOptions, 'codeComponents' | 'codePick' | 'codeJoin'>): OrderQuery['tests'] {
  const d = record.delimiters;
  const codes = rawField(record, 5)
    .split(d.repeat)
    .map((test) =>
      codeFromComponents(
        test.split(d.component).map((c) => unescape(c, d)),
        options,
      ),
    )
    .filter((code) => code !== '');
  return codes.length === 0 || codes.some(isAll) ? 'all' : [...new Set(codes)];
}

function isAll(text: string): boolean {
  return text.trim().toUpperCase() === 'ALL';
}
