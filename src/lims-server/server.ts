// A LIMS test server: a real node:http server implementing the LIMS contract (src/sinks/LIMS.md), which misbehaves on
// request. Used by the tests, the LIMS bench and the demo. Not for production: the admin routes have no auth.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TestListener } from '../test-servers/listener.js';
import { latencyOf, noFaults, seededRandom, type LimsFaults } from './faults.js';
import { dispatchRoute, OrderBook, ordersGetRoute, type OrdersCtx, type TestSpecimen } from './orders.js';
import { RecordBook } from './records.js';
import { getRoute, putRoute, tokenRoute, type RouteCtx } from './routes.js';
import { TokenDesk, type LimsClient } from './tokens.js';

/** How to start the server. */
export interface LimsServerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  resourcePath?: string;
  /** Where orders are looked up and dispatches reported (default `/orders`). */
  ordersPath?: string;
  /** Specimens with orders the server holds from the start. */
  orders?: TestSpecimen[];
  clients?: LimsClient[];
  /** Bearer tokens accepted forever (the static-token alternative). */
  staticTokens?: string[];
  envelopeVersions?: string[];
  faults?: Partial<LimsFaults>;
  /** Seeded by default, so a run's misbehavior is reproducible. */
  random?: () => number;
  now?: () => number;
  /** Serve POST /_admin/faults and GET /_admin/stats (default true). */
  admin?: boolean;
  /** Serve HTTPS with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

/** Counters a test asserts on. */
export interface LimsServerStats {
  records: number;
  applied: number;
  replays: number;
  tokensIssued: number;
  hanging: number;
  /** Orders lookups answered (or failed on request). */
  orderLookups: number;
  /** Distinct orders dispatched (first PUTs); `dispatchPuts` counts every PUT. */
  dispatches: number;
  dispatchPuts: number;
}

/** A running (or startable) LIMS test server. */
export interface LimsServer {
  /** http://host:port, once started. */
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Changes misbehavior at run time; `outage: true` also drops every open connection. */
  configure(faults: Partial<LimsFaults>): void;
  faults(): LimsFaults;
  /** Another writer changes (or, when absent, creates from `{}`) a record: a technologist's edit in the LIMS. */
  /** Returns whether the record existed before. */
  editRecord(id: string, mutate: (document: Record<string, unknown>) => Record<string, unknown>): boolean;
  record(id: string): { document: unknown; etag: string } | undefined;
  /** How many times labgate's writes of `id` were applied (replays excluded). */
  appliedCount(id: string): number;
  appliedCounts(): ReadonlyMap<string, number>;
  revokeTokens(): void;
  forgetIdempotencyKeys(): void;
  /** Ends every hanging request without answering and frees its idempotency key (nothing applied). */
  releaseHung(): void;
  issuedTokens(): readonly string[];
  stats(): LimsServerStats;
  /** Adds or replaces specimens and their orders. */
  loadOrders(specimens: readonly TestSpecimen[]): void;
  /** PUTs received per `orderId|instrumentId` (1: dispatched once). */
  dispatches(): Record<string, number>;
}

/** Creates the server; call start(). */
export function createLimsServer(options: LimsServerOptions = {}): LimsServer {
  return new LimsTestServer(options);
}

class LimsTestServer implements LimsServer {
  private current: LimsFaults;
  private readonly book = new RecordBook();
  private readonly desk: TokenDesk;
  private readonly ctx: RouteCtx;
  private readonly listener: TestListener;
  private readonly resourcePath: string;
  private readonly ordersPath: string;
  private readonly orderBook = new OrderBook();
  private readonly orders: OrdersCtx;

  constructor(private readonly options: LimsServerOptions) {
    this.current = { ...noFaults, ...options.faults, scripted: {} };
    this.resourcePath = options.resourcePath ?? '/api/v1/results';
    this.ordersPath = options.ordersPath ?? '/orders';
    this.orderBook.load(options.orders ?? []);
    const now = options.now ?? Date.now;
    this.desk = new TokenDesk(options.clients ?? [{ clientId: 'labgate', clientSecret: 'labgate-secret' }], now, options.staticTokens);
    this.ctx = {
      book: this.book,
      desk: this.desk,
      faults: () => this.current,
      random: options.random ?? seededRandom(1),
      now,
      envelopeVersions: options.envelopeVersions ?? ['1'],
      hung: new Map(),
      scripts: new Map(),
    };
    this.listener = new TestListener({
      ...(options.host ? { host: options.host } : {}),
      ...(options.port ? { port: options.port } : {}),
      ...(options.tls ? { tls: options.tls } : {}),
      latencyMs: () => latencyOf(this.current, this.ctx.random),
      down: () => this.current.outage,
      handle: (req, res, body) => this.route(req, res, body),
    });
    if (options.faults?.scripted) this.configure({ scripted: options.faults.scripted });
    this.orders = { book: this.orderBook, authorized: (req) => this.desk.check(req.headers.authorization), faults: () => this.current };
  }

  get url(): string {
    return this.listener.origin;
  }

  /** Listens; after a stop() it comes back on the same port (an outage by refusal, then recovery). */
  start(): Promise<void> {
    return this.listener.start();
  }

  async stop(): Promise<void> {
    this.releaseHung();
    await this.listener.stop();
  }

  configure(patch: Partial<LimsFaults>): void {
    // Scripted fates are queued, not kept as settings: each is taken by one PUT.
    for (const [id, fates] of Object.entries(patch.scripted ?? {})) this.ctx.scripts.set(id, [...(this.ctx.scripts.get(id) ?? []), ...fates]);
    this.current = { ...this.current, ...patch, scripted: {} };
    if (this.current.outage) this.listener.dropConnections();
  }

  faults(): LimsFaults {
    return this.current;
  }

  editRecord(id: string, mutate: (d: Record<string, unknown>) => Record<string, unknown>): boolean {
    const current = this.book.get(id);
    this.book.edit(id, JSON.stringify(mutate(current ? (JSON.parse(current.body) as Record<string, unknown>) : {})));
    return current !== undefined;
  }

  record(id: string): { document: unknown; etag: string } | undefined {
    const r = this.book.get(id);
    return r ? { document: JSON.parse(r.body) as unknown, etag: r.etag } : undefined;
  }

  appliedCount(id: string): number {
    return this.book.appliedCount(id);
  }

  appliedCounts(): ReadonlyMap<string, number> {
    return this.book.appliedCounts();
  }

  revokeTokens(): void {
    this.desk.revokeAll();
  }

  forgetIdempotencyKeys(): void {
    this.book.forgetAnswers();
  }

  releaseHung(): void {
    for (const [res, key] of this.ctx.hung) {
      this.book.release(key);
      res.socket?.destroy();
    }
    this.ctx.hung.clear();
  }

  issuedTokens(): readonly string[] {
    return this.desk.all();
  }

  stats(): LimsServerStats {
    return {
      records: this.book.size,
      applied: [...this.book.appliedCounts().values()].reduce((a, b) => a + b, 0),
      replays: this.book.replays,
      tokensIssued: this.desk.all().length,
      hanging: this.ctx.hung.size,
      orderLookups: this.orderBook.lookups,
      dispatches: Object.keys(this.orderBook.dispatches()).length,
      dispatchPuts: Object.values(this.orderBook.dispatches()).reduce((a, b) => a + b, 0),
    };
  }

  loadOrders(specimens: readonly TestSpecimen[]): void {
    this.orderBook.load(specimens);
  }

  dispatches(): Record<string, number> {
    return this.orderBook.dispatches();
  }

  private route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method === 'POST' && path === '/oauth/token') return tokenRoute(this.ctx, req, res, body);
    if (this.options.admin !== false && path.startsWith('/_admin/')) return this.adminRoute(req, res, path, body);
    if (path === this.ordersPath && req.method === 'GET') return ordersGetRoute(this.orders, req, res, new URL(req.url ?? '/', 'http://x').searchParams);
    const dispatch = path.startsWith(this.ordersPath + '/') ? /^([^/]+)\/dispatch\/([^/]+)$/.exec(path.slice(this.ordersPath.length + 1)) : null;
    if (dispatch && req.method === 'PUT') return dispatchRoute(this.orders, req, res, decodeURIComponent(dispatch[1]!), decodeURIComponent(dispatch[2]!), body);
    const prefix = this.resourcePath + '/';
    const id = path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : '';
    if (id && !id.includes('/') && req.method === 'PUT') return putRoute(this.ctx, req, res, id, body);
    if (id && !id.includes('/') && req.method === 'GET') return getRoute(this.ctx, req, res, id);
    res.writeHead(404).end();
  }

  private adminRoute(req: IncomingMessage, res: ServerResponse, path: string, body: string): void {
    const json = (value: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'GET' && path === '/_admin/stats') return json(this.stats());
    if (req.method === 'GET' && path === '/_admin/dispatches') return json(this.dispatches());
    if (req.method === 'POST' && path === '/_admin/orders') return this.admitOrders(res, body, json);
    if (req.method !== 'POST' || path !== '/_admin/faults') return void res.writeHead(404).end();
    try {
      this.configure(JSON.parse(body) as Partial<LimsFaults>);
    } catch {
      return void res.writeHead(400).end();
    }
    json(this.current);
  }

  private admitOrders(res: ServerResponse, body: string, json: (value: unknown) => void): void {
    try {
      this.loadOrders((JSON.parse(body) as { specimens: TestSpecimen[] }).specimens);
    } catch {
      return void res.writeHead(400).end();
    }
    json({ loaded: true });
  }
}

export { seededRandom } from './faults.js';
export type { LimsFaults } from './faults.js';
export type { LimsClient } from './tokens.js';
export type { OrderFault, TestSpecimen } from './orders.js';
