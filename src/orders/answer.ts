// From the LIMS's orders to what one instrument is answered: the reverse mapping (LOINC → the analyzer's code, from
// the instrument's own mapping), the tests the analyzer asked about, and the specimens the query named. Pure.
import type { AnalyteMapping } from '../config/mapping.js';
import { accessionFault } from '../result.js';
import type { InstrumentOrder, InstrumentSpecimen, NoInformationReason, OrderQuery, SpecimenOrders, SpecimenSelector } from './order.js';

/** What the LIMS said for one lookup (an accession, or the pending worklist), or why it said nothing usable. */
export type Lookup =
  | { kind: 'specimens'; specimens: SpecimenOrders[] }
  /** `detail`: what happened, for the log (a status, a failure kind, the paths of a malformed answer; never values). */
  | { kind: 'failed'; reason: Extract<NoInformationReason, 'lims-timeout' | 'lims-unavailable' | 'lims-error'>; detail?: string };

/** An analyzer's answer: the specimens it can run with their orders, or "no information" and why. */
export type OrderAnswer =
  { kind: 'orders'; specimens: InstrumentSpecimen[]; without: string[] } | { kind: 'no-information'; reason: NoInformationReason; without: string[] };

/**
 * The analyzer's code for a LOINC: the first mapping entry that names it, so the configuration's order decides when
 * several codes map to one LOINC. Undefined when the instrument cannot express the order.
 */
export function analyzerCodeFor(mapping: readonly AnalyteMapping[], loinc: string): string | undefined {
  const wanted = loinc.trim().toUpperCase();
  return mapping.find((m) => m.loinc.trim().toUpperCase() === wanted)?.code.trim();
}

/** The specimen's orders this instrument can run (and, when the analyzer named tests, only those). */
export function ordersFor(
  specimen: SpecimenOrders,
  mapping: readonly AnalyteMapping[],
  tests: 'all' | readonly string[] | ReadonlySet<string> = 'all',
): InstrumentSpecimen {
  const wanted = tests === 'all' ? null : tests instanceof Set ? tests : new Set(tests);
  const orders: InstrumentOrder[] = [];
  const seen = new Set<string>();
  for (const order of specimen.orders) {
    const analyzerCode = analyzerCodeFor(mapping, order.loinc);
    if (analyzerCode === undefined || seen.has(analyzerCode)) continue;
    if (wanted !== null && !wanted.has(analyzerCode)) continue;
    // Two orders for one test on one specimen are one test for the analyzer; both are dispatched by their ids below.
    seen.add(analyzerCode);
    orders.push({ ...order, analyzerCode });
  }
  return { accession: specimen.accession, orders, patient: specimen.patient };
}

/** Every order of the specimen that the instrument's answer carries (duplicates of one test included). */
export function dispatchedOrders(specimen: SpecimenOrders, answered: InstrumentSpecimen): string[] {
  const codes = new Set(answered.orders.map((o) => o.loinc.trim().toUpperCase()));
  return specimen.orders.filter((o) => codes.has(o.loinc.trim().toUpperCase())).map((o) => o.orderId);
}

/** True when the selector names the accession. Ranges compare as numbers when both ends and the id are digits. */
export function selects(selector: SpecimenSelector, accession: string): boolean {
  if (selector.kind === 'all') return true;
  if (selector.kind === 'id') return selector.accession === accession;
  const numeric = [selector.from, selector.to, accession].every((s) => /^\d+$/.test(s));
  const cmp = numeric ? compareDigits : (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return cmp(selector.from, accession) <= 0 && cmp(accession, selector.to) <= 0;
}

function compareDigits(a: string, b: string): number {
  const [x, y] = [a.replace(/^0+(?=\d)/, ''), b.replace(/^0+(?=\d)/, '')];
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The lookups one query message needs: each named accession once, one by one, and the pending worklist once when any
 * of its queries asks for a range or ALL (a worklist request, not one lookup per specimen). Queries that do not ask
 * for orders look nothing up.
 */
export function lookupPlan(queries: readonly OrderQuery[]): { accessions: string[]; worklist: boolean } {
  const asking = queries.filter((q) => q.request === 'orders');
  const accessions = new Set(asking.flatMap((q) => q.specimens.flatMap((s) => (s.kind === 'id' ? [s.accession] : []))));
  return { accessions: [...accessions], worklist: asking.some((q) => q.specimens.some((s) => s.kind !== 'id')) };
}

/**
 * The queries of one message keeping at most `max` specimen selectors among them (an id named twice counts once; a
 * range or ALL counts one), in the order sent; `refused` is how many more the analyzer named. One analyzer's query
 * must not become thousands of LIMS lookups, nor an answer carrying every specimen it cared to name.
 */
export function boundQueries(queries: readonly OrderQuery[], max: number): { queries: OrderQuery[]; refused: number } {
  const kept = new Set<string>();
  let refused = queries.reduce((n, q) => n + (q.unread ?? 0), 0);
  const bounded = queries.map((q) => {
    const specimens = q.specimens.filter((s) => {
      const key = s.kind === 'id' ? `id ${s.accession}` : s.kind === 'range' ? `range ${s.from} ${s.to}` : 'all';
      if (kept.has(key)) return true;
      if (kept.size >= max) {
        refused += 1;
        return false;
      }
      kept.add(key);
      return true;
    });
    return specimens.length === q.specimens.length ? q : { ...q, specimens };
  });
  // A query whose every specimen was refused asks nothing any more; one that named none is answered as before.
  return { queries: bounded.filter((q, i) => q.specimens.length > 0 || queries[i]!.specimens.length === 0), refused };
}

/**
 * The queries without the specimens whose ids cannot be read with certainty (src/result.ts accessionFault: one rule
 * for results and queries), and how many were so refused. Looking up what is left of a half-decoded id would answer
 * for another specimen.
 */
export function readableQueries(queries: readonly OrderQuery[]): { queries: OrderQuery[]; unreadable: number } {
  let unreadable = 0;
  const readable = (s: SpecimenSelector): boolean => {
    const ids = s.kind === 'id' ? [s.accession] : s.kind === 'range' ? [s.from, s.to] : [];
    const ok = ids.every((id) => accessionFault(id) === null);
    if (!ok) unreadable += 1;
    return ok;
  };
  const kept = queries.map((q) => ({ ...q, specimens: q.specimens.filter(readable) }));
  return { queries: kept.filter((q, i) => q.specimens.length > 0 || queries[i]!.specimens.length === 0), unreadable };
}

/**
 * Decides the answer from what the lookups returned. Specimens the LIMS answered are answered even when another
 * lookup failed; with nothing to send, "no information" names the LIMS's failure before a plain absence of orders.
 */
export function decideAnswer(query: OrderQuery, lookups: readonly Lookup[], mapping: readonly AnalyteMapping[]): OrderAnswer {
  const named = query.specimens.flatMap((s) => (s.kind === 'id' ? [s.accession] : []));
  if (query.request !== 'orders') return { kind: 'no-information', reason: 'unsupported-request', without: named };
  const found = new Map<string, InstrumentSpecimen>();
  const ids = new Set(named);
  const ranges = query.specimens.filter((s) => s.kind !== 'id');
  const tests = query.tests === 'all' ? 'all' : new Set(query.tests);
  let unexpressible = false;
  for (const lookup of lookups) {
    if (lookup.kind !== 'specimens') continue;
    for (const specimen of lookup.specimens) {
      const asked = ids.has(specimen.accession) || ranges.some((s) => selects(s, specimen.accession));
      if (found.has(specimen.accession) || !asked) continue;
      const mine = ordersFor(specimen, mapping, tests);
      if (mine.orders.length > 0) found.set(specimen.accession, mine);
      else if (specimen.orders.length > 0) unexpressible = true;
    }
  }
  const without = named.filter((a) => !found.has(a));
  if (found.size > 0) return { kind: 'orders', specimens: [...found.values()], without };
  const failure = lookups.find((l): l is Extract<Lookup, { kind: 'failed' }> => l.kind === 'failed');
  return { kind: 'no-information', reason: failure?.reason ?? (unexpressible ? 'not-expressible' : 'no-orders'), without };
}

/**
 * The answer without the specimens any of whose identifiers (`idsOf`: accession, test codes, patient id when sent) the
 * instrument cannot be sent exactly (`exact`): a replaced character would name another specimen or test. An answer
 * left with no specimen is "no information" (`not-expressible`). `leftOut` counts the specimens left out.
 */
export function keepWritable(
  answer: OrderAnswer,
  idsOf: (s: InstrumentSpecimen) => string[],
  exact: (value: string) => boolean,
): { answer: OrderAnswer; leftOut: number } {
  const without = answer.without.filter(exact);
  let leftOut = answer.without.length - without.length;
  if (answer.kind !== 'orders') return { answer: { ...answer, without }, leftOut };
  const specimens = answer.specimens.filter((s) => idsOf(s).every(exact));
  leftOut += answer.specimens.length - specimens.length;
  if (specimens.length > 0) return { answer: { kind: 'orders', specimens, without }, leftOut };
  return { answer: { kind: 'no-information', reason: 'not-expressible', without }, leftOut };
}
