// The LIMS test server's orders: specimens with their orders and patient, the lookups an analyzer's query and a
// download make, and the dispatches labgate reports, counted so tests can prove "each reached the LIMS once".
// Misbehaves per accession on request: too slow for the analyzer's deadline, or 503.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One order as the test server holds it; `instruments` limits the pending worklist (absent: any instrument). */
export interface TestOrder {
  orderId: string;
  loinc: string;
  priority?: 'routine' | 'stat';
  orderedAt: string;
  instruments?: string[];
}

/** A specimen as the test server holds it. */
export interface TestSpecimen {
  accession: string;
  orders: TestOrder[];
  patient?: { id: string; name: string; birthDate: string; sex: 'F' | 'M' | 'U' } | null;
}

/** What a lookup of one accession does instead of answering at once. */
export type OrderFault = 'slow' | '503' | '500';

/** Specimens, dispatches and lookup counts; no I/O. */
export class OrderBook {
  private readonly specimens = new Map<string, TestSpecimen>();
  /** `orderId|instrumentId` → PUTs received (the first one is the dispatch, the rest are replays). */
  private readonly puts = new Map<string, number>();
  lookups = 0;

  /** Adds or replaces specimens. */
  load(specimens: readonly TestSpecimen[]): void {
    for (const s of specimens) this.specimens.set(s.accession, s);
  }

  specimen(accession: string): TestSpecimen | undefined {
    return this.specimens.get(accession);
  }

  /** The order with this id, if any specimen holds it. */
  order(orderId: string): TestOrder | undefined {
    for (const s of this.specimens.values()) for (const o of s.orders) if (o.orderId === orderId) return o;
    return undefined;
  }

  /** Specimens with orders for `instrument` not yet dispatched to it, each with those orders only. */
  pending(instrument: string): TestSpecimen[] {
    return [...this.specimens.values()]
      .map((s) => ({
        ...s,
        orders: s.orders.filter((o) => (o.instruments ?? [instrument]).includes(instrument) && !this.puts.has(`${o.orderId}|${instrument}`)),
      }))
      .filter((s) => s.orders.length > 0);
  }

  /** Records one dispatch PUT; true when it was the first for this order and instrument. */
  dispatch(orderId: string, instrument: string): boolean {
    const key = `${orderId}|${instrument}`;
    const n = (this.puts.get(key) ?? 0) + 1;
    this.puts.set(key, n);
    return n === 1;
  }

  /** PUTs received per `orderId|instrumentId`. */
  dispatches(): Record<string, number> {
    return Object.fromEntries(this.puts);
  }
}

/** What the orders routes need from the server. */
export interface OrdersCtx {
  book: OrderBook;
  authorized: (req: IncomingMessage) => boolean;
  faults: () => { orderFaults: Record<string, OrderFault>; slowMs: number };
}

const json = (res: ServerResponse, status: number, value: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

/** GET {ordersPath}?accession=A&instrument=ID, or ?instrument=ID&status=pending. */
export function ordersGetRoute(ctx: OrdersCtx, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): void {
  if (!ctx.authorized(req)) return json(res, 401, { type: 'unauthorized' });
  ctx.book.lookups++;
  const instrument = query.get('instrument') ?? '';
  const accession = query.get('accession');
  if (accession === null) {
    if (query.get('status') !== 'pending' || !instrument) return json(res, 400, { type: 'bad-query' });
    return json(res, 200, { specimens: ctx.book.pending(instrument).map(wire) });
  }
  const answer = (): void => {
    const s = ctx.book.specimen(accession);
    return s ? json(res, 200, wire(s)) : json(res, 404, { type: 'not-found' });
  };
  const fault = ctx.faults().orderFaults[accession];
  if (fault === 'slow') return void setTimeout(answer, ctx.faults().slowMs);
  if (fault === '503' || fault === '500') return json(res, Number(fault), { type: `status-${fault}` });
  answer();
}

/** PUT {ordersPath}/{orderId}/dispatch/{instrumentId} */
export function dispatchRoute(ctx: OrdersCtx, req: IncomingMessage, res: ServerResponse, orderId: string, instrument: string, body: string): void {
  if (!ctx.authorized(req)) return json(res, 401, { type: 'unauthorized' });
  let at: unknown;
  try {
    at = (JSON.parse(body) as { dispatchedAt?: unknown }).dispatchedAt;
  } catch {
    at = undefined;
  }
  if (typeof at !== 'string' || !Number.isFinite(Date.parse(at))) return json(res, 400, { type: 'dispatched-at' });
  if (!ctx.book.order(orderId)) return json(res, 404, { type: 'not-found' });
  const first = ctx.book.dispatch(orderId, instrument);
  json(res, first ? 201 : 200, { orderId, instrumentId: instrument });
}

function wire(s: TestSpecimen): object {
  return {
    accession: s.accession,
    orders: s.orders.map((o) => ({ orderId: o.orderId, loinc: o.loinc, priority: o.priority ?? 'routine', orderedAt: o.orderedAt })),
    patient: s.patient ?? null,
  };
}
