// The order desk of one two-way instrument, protocol-neutral (ASTM today, IHE LAW later): it asks the LIMS within the
// analyzer's deadline, decides the answer, and once the analyzer has an answer or a download records what it now holds
// (each order once) and counts it. ARCHITECTURE.md invariant 9: whatever the LIMS does, the answer is decided in time;
// a LIMS that is down, slow or errs makes it "no information". Nothing here logs patient data or an accession.
import type { AnalyteMapping } from '../config/mapping.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { boundQueries, decideAnswer, readableQueries, dispatchedOrders, lookupPlan, ordersFor, type Lookup, type OrderAnswer } from './answer.js';
import { lookUp, type LookedUp, type OrdersSource } from './lookups.js';
import type { InstrumentSpecimen, OrderQuery, SpecimenOrders } from './order.js';

export type { OrdersSource } from './lookups.js';

/** What the analyzer has been sent, and the day figures (the store's OrderStore). */
export interface OrdersLedger {
  /** May throw when the store cannot commit. */
  recordSent(instrumentId: string, orders: readonly SentOrder[], at: number, purpose: 'query' | 'download'): number;
  sentOf(instrumentId: string, orderIds: readonly string[]): Set<string>;
  count(instrumentId: string, at: number, figure: string): void;
}

/** What a runner gets to answer queries and download orders with. */
export interface OrdersPort {
  source: OrdersSource;
  ledger: OrdersLedger;
}

/** One order the analyzer was sent, for the ledger. */
export interface SentOrder {
  orderId: string;
  accession: string;
}

/** What the desk needs, injected. */
export interface DeskDeps {
  instrumentId: string;
  mapping: readonly AnalyteMapping[];
  queryTimeoutMs: number;
  /** Specimens one query message may name (ids, ranges, ALL); the rest are refused, counted and logged. */
  maxSpecimens: number;
  /** LIMS lookups of one query message in flight at once. */
  lookupsInFlight: number;
  clock: Clock;
  log: Log;
  source: OrdersSource;
  ledger: OrdersLedger;
  /** Told each figure as it is counted (metrics, the status page); an accepted answer comes with its time from the query. */
  onFigure?: (figure: string, answeredInMs?: number) => void;
}

/** An answer or a download on its way to the analyzer. */
export interface Ticket {
  id: string;
  purpose: 'query' | 'download';
  answer: OrderAnswer;
  /** Every LIMS order the message carries (two orders for one test both reached the analyzer). */
  orders: SentOrder[];
  /** Monotonic ms (clock.monotonic) after which an answer that has not begun is not sent at all (the analyzer stopped waiting). */
  startBy: number;
  /** Monotonic ms the query arrived (an answer's ticket only). */
  askedAt?: number;
}

/** Time kept back from the analyzer's deadline for sending the answer itself. */
export function answerReserveMs(queryTimeoutMs: number): number {
  return Math.min(2_000, queryTimeoutMs / 2);
}

/** One instrument's desk. */
export class OrderDesk {
  private tickets = 0;

  constructor(private readonly deps: DeskDeps) {}

  /**
   * Decides the answer to one query message (its Q records) received at `receivedAt` (clock.monotonic: the analyzer's
   * deadline runs whatever the wall clock does); null for a cancel. The work is
   * linear in what the message names, and bounded: at most `maxSpecimens` are looked up, `lookupsInFlight` at a time.
   */
  async ask(sent: readonly OrderQuery[], receivedAt: number): Promise<Ticket | null> {
    const { deps } = this;
    if (sent.every((q) => q.request === 'cancel')) return null;
    const day = deps.clock.now();
    this.count(day, 'queries');
    const bounded = boundQueries(sent, deps.maxSpecimens);
    if (bounded.refused > 0) {
      this.count(day, 'specimens-over-limit');
      deps.log.warn(
        { refused: bounded.refused, maxSpecimens: deps.maxSpecimens },
        'host query names more specimens than one query may; the rest are not looked up nor answered',
      );
    }
    const { queries, unreadable } = readableQueries(bounded.queries);
    if (unreadable > 0) {
      this.count(day, 'specimens-unreadable');
      deps.log.warn({ unreadable }, 'host query specimen ids that could not be decoded are not looked up nor answered');
    }
    const reserve = answerReserveMs(deps.queryTimeoutMs);
    const budget = Math.max(0, receivedAt + deps.queryTimeoutMs - reserve - deps.clock.monotonic());
    const started = deps.clock.monotonic();
    const controller = new AbortController();
    const timer = deps.clock.setTimeout(() => controller.abort(), budget);
    const looked = await lookUp(lookupPlan(queries), deps.source, deps.instrumentId, deps.lookupsInFlight, controller.signal);
    deps.clock.clearTimeout(timer);
    const all = [...looked.byAccession.values(), ...(looked.worklist ? [looked.worklist] : [])];
    const specimens = new Map(all.flatMap((l) => (l.kind === 'specimens' ? l.specimens : [])).map((s) => [s.accession, s]));
    const answer = combine(queries.map((q) => decideAnswer(q, lookupsOf(q, looked), deps.mapping)));
    const failure = all.find((l) => l.kind === 'failed');
    deps.log.info(
      {
        queries: queries.length,
        lookups: all.length,
        ms: deps.clock.monotonic() - started,
        answer: answer.kind,
        ...(answer.kind === 'no-information' ? { reason: answer.reason } : { specimens: answer.specimens.length }),
        ...(failure?.kind === 'failed' && failure.detail ? { lims: failure.detail } : {}),
      },
      'host query decided',
    );
    const orders = answer.kind === 'orders' ? sentOrders(answer.specimens, specimens) : [];
    return { ...this.ticket('query', answer, orders, receivedAt + deps.queryTimeoutMs - reserve / 2), askedAt: receivedAt };
  }

  /** The pending worklist's specimens with orders this instrument can run and has not been sent, as downloads. */
  async downloads(signal: AbortSignal, inFlight: ReadonlySet<string>): Promise<Ticket[]> {
    const { deps } = this;
    const lookup = await deps.source.worklist(deps.instrumentId, signal);
    if (lookup.kind === 'failed') {
      deps.log.warn({ reason: lookup.reason, lims: lookup.detail }, 'pending worklist not read; trying again at the next poll');
      return [];
    }
    const tickets: Ticket[] = [];
    for (const specimen of lookup.specimens) {
      const ids = specimen.orders.map((o) => o.orderId);
      const sent = deps.ledger.sentOf(deps.instrumentId, ids);
      const fresh = { ...specimen, orders: specimen.orders.filter((o) => !sent.has(o.orderId) && !inFlight.has(o.orderId)) };
      const mine = ordersFor(fresh, deps.mapping);
      if (mine.orders.length === 0) continue;
      const answer: OrderAnswer = { kind: 'orders', specimens: [mine], without: [] };
      tickets.push(this.ticket('download', answer, sentOrders([mine], new Map([[fresh.accession, fresh]])), Number.POSITIVE_INFINITY));
    }
    return tickets;
  }

  /** The analyzer has the ticket's message (its final ACK), or was answered with silence: recorded and counted. */
  delivered(ticket: Ticket): void {
    const { deps } = this;
    const at = deps.clock.now();
    const answeredInMs = ticket.askedAt === undefined ? undefined : deps.clock.monotonic() - ticket.askedAt;
    try {
      if (ticket.orders.length > 0) deps.ledger.recordSent(deps.instrumentId, ticket.orders, at, ticket.purpose);
      if (ticket.purpose === 'query') this.count(at, figureOf(ticket.answer), answeredInMs);
      else deps.onFigure?.('downloads');
    } catch (err) {
      // The analyzer has its orders; without the record a download may be sent again and the LIMS not told.
      deps.log.error({ err: err instanceof Error ? err.message : String(err), orders: ticket.orders.length }, 'orders sent but not recorded');
    }
  }

  /** The ticket's message did not reach the analyzer. */
  failed(ticket: Ticket, reason: string): void {
    const { deps } = this;
    if (ticket.purpose === 'query') this.count(deps.clock.now(), 'answers-failed');
    deps.log.warn({ purpose: ticket.purpose, answer: ticket.answer.kind, reason }, 'orders message not delivered');
  }

  /** Counts a figure now (a refusal the driver decided, e.g. `specimens-left-out`). */
  countFigure(figure: string): void {
    this.count(this.deps.clock.now(), figure);
  }

  /** Counts a figure in the store (never waiting for fsync) and tells the listener; a store that cannot is logged. */
  private count(at: number, figure: string, answeredInMs?: number): void {
    try {
      this.deps.ledger.count(this.deps.instrumentId, at, figure);
    } catch (err) {
      this.deps.log.warn({ err: err instanceof Error ? err.message : String(err), figure }, 'two-way figure not counted');
    }
    this.deps.onFigure?.(figure, answeredInMs);
  }

  private ticket(purpose: Ticket['purpose'], answer: OrderAnswer, orders: SentOrder[], startBy: number): Ticket {
    return { id: `${this.deps.instrumentId}:${purpose}:${++this.tickets}`, purpose, answer, orders, startBy };
  }
}

/** The day figure an answer counts under. */
export function figureOf(answer: OrderAnswer): string {
  return answer.kind === 'orders' ? 'answered-orders' : `no-information:${answer.reason}`;
}

/** What one query's answer is decided from: the lookups of the ids it names, and the worklist if it named a range or ALL. */
function lookupsOf(query: OrderQuery, looked: LookedUp): Lookup[] {
  if (query.request !== 'orders') return [];
  const own = query.specimens.flatMap((s) => (s.kind === 'id' ? [looked.byAccession.get(s.accession)!] : []));
  return looked.worklist !== null && query.specimens.some((s) => s.kind !== 'id') ? [...own, looked.worklist] : own;
}

/** One answer from the answers to a message's Q records: every specimen with orders, once; else the first reason. */
function combine(answers: readonly OrderAnswer[]): OrderAnswer {
  const specimens = new Map<string, InstrumentSpecimen>();
  for (const a of answers) if (a.kind === 'orders') for (const s of a.specimens) if (!specimens.has(s.accession)) specimens.set(s.accession, s);
  const without = [...new Set(answers.flatMap((a) => a.without))].filter((acc) => !specimens.has(acc));
  if (specimens.size > 0) return { kind: 'orders', specimens: [...specimens.values()], without };
  const first = answers.find((a) => a.kind === 'no-information' && a.reason !== 'no-orders') ?? answers[0];
  return { kind: 'no-information', reason: first?.kind === 'no-information' ? first.reason : 'no-orders', without };
}

function sentOrders(answered: readonly InstrumentSpecimen[], held: ReadonlyMap<string, SpecimenOrders>): SentOrder[] {
  return answered.flatMap((s) => {
    const original = held.get(s.accession);
    return original ? dispatchedOrders(original, s).map((orderId) => ({ orderId, accession: s.accession })) : [];
  });
}
