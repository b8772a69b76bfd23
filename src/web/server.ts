// The gateway's one HTTP listener (default 127.0.0.1): /healthz, /metrics, and the status page's routes,
// which the status page (src/web/status/) adds through `route()` on the same server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Log } from '../log.js';
import { ConnectionGate, type ConnectionBudget, type ConnectionCounts } from './connections.js';

/** Handles one request; `url` is already parsed. A thrown error becomes a 500 and a log line. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Exact path, or a pattern for paths with parameters. */
  path: string | RegExp;
  handler: RouteHandler;
}

/** Runs before routing (the status page's token check); returns false when it has answered the request itself. */
export type RequestGuard = (req: IncomingMessage, res: ServerResponse, url: URL) => boolean | Promise<boolean>;

/** How long a request may take to arrive, and how many sockets the listener holds (see connections.ts). */
export interface HttpLimits extends ConnectionBudget {
  /** From a request's first byte to the end of its headers (slow-header attacks). */
  headersMs: number;
  /** From a request's first byte to the end of its body. */
  requestMs: number;
  /** An idle keep-alive connection after a response. */
  keepAliveMs: number;
}

/** The defaults: 256 sockets is well below the service's LimitNOFILE of 4096, and far more than browsers and scrapers use. */
export const defaultHttpLimits: HttpLimits = { max: 256, idleMs: 10_000, headersMs: 10_000, requestMs: 15_000, keepAliveMs: 5_000 };

export interface WebServerOptions {
  host: string;
  port: number;
  log: Log;
  routes?: Route[];
  guard?: RequestGuard;
  limits?: Partial<HttpLimits>;
}

/** node:http with a tiny route table; `start()` listens, `stop()` closes every connection. */
export class WebServer {
  private readonly routes: Route[];
  private server: Server | undefined;
  private gate: ConnectionGate | undefined;
  private onDemand: { load: () => Promise<Route[]>; loading?: Promise<void> } | undefined;

  constructor(private readonly options: WebServerOptions) {
    this.routes = [...(options.routes ?? [])];
  }

  /** Adds a route (before or after start). */
  route(route: Route): void {
    this.routes.push(route);
  }

  /**
   * Adds the routes `load` builds, once, on the first request no other route answers: the pages' modules are not
   * loaded while the gateway starts (an analyzer waits for its first ACK meanwhile), nor for /healthz or /metrics.
   */
  routesOnDemand(load: () => Promise<Route[]>): void {
    this.onDemand = { load };
  }

  /** Listens; resolves with the bound address (port 0 picks a free one). Rejects with EADDRINUSE etc. */
  start(): Promise<AddressInfo> {
    const limits = { ...defaultHttpLimits, ...this.options.limits };
    const server = createServer(
      // The headers and request timeouts are checked every second rather than node's default 30 s.
      { headersTimeout: limits.headersMs, requestTimeout: limits.requestMs, keepAliveTimeout: limits.keepAliveMs, connectionsCheckingInterval: 1_000 },
      (req, res) => void this.handle(req, res),
    );
    this.gate = new ConnectionGate(limits, (counts) =>
      this.options.log.warn({ ...counts, max: limits.max }, 'http connection limit reached; idle connections closed'),
    );
    this.gate.attach(server);
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port, this.options.host, () => {
        server.off('error', reject);
        server.on('error', (err) => this.options.log.error({ err }, 'http server error'));
        const address = server.address() as AddressInfo;
        this.options.log.info({ host: address.address, port: address.port }, 'http listening');
        resolve(address);
      });
    });
  }

  /** The listener's sockets: open now, and closed or refused for the connection limit since start. */
  connections(): ConnectionCounts {
    return this.gate?.counts() ?? { open: 0, evicted: 0, refused: 0 };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  // Never rejects: the listener calls it with `void`, so a throw escaping here would be an unhandled rejection.
  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let path = '?';
    try {
      const url = requestUrl(req.url);
      if (url === undefined) return send(res, 400, 'text/plain; charset=utf-8', 'bad request target\n');
      path = url.pathname;
      const method = req.method === 'HEAD' ? 'GET' : req.method;
      if (this.options.guard && !(await this.options.guard(req, res, url))) return;
      let matches = this.matching(url);
      if (this.onDemand && !matches.some((r) => r.method === method)) {
        await this.loadOnDemand(this.onDemand);
        matches = this.matching(url);
      }
      const route = matches.find((r) => r.method === method);
      if (route) return await route.handler(req, res, url);
      if (matches.length) {
        res.setHeader('allow', [...new Set(matches.map((r) => r.method))].join(', '));
        return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      }
      send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    } catch (err) {
      this.options.log.error({ err, path }, 'http handler failed');
      try {
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      } catch {
        res.destroy();
      }
    }
  }

  private matching(url: URL): Route[] {
    return this.routes.filter((r) => (typeof r.path === 'string' ? r.path === url.pathname : r.path.test(url.pathname)));
  }

  // One load for every request that arrives meanwhile; a load that fails is tried again by the next request.
  private async loadOnDemand(onDemand: { load: () => Promise<Route[]>; loading?: Promise<void> }): Promise<void> {
    onDemand.loading ??= onDemand.load().then(
      (routes) => {
        this.routes.push(...routes);
        if (this.onDemand === onDemand) this.onDemand = undefined;
      },
      (err: unknown) => {
        onDemand.loading = undefined;
        throw err;
      },
    );
    await onDemand.loading;
  }
}

/** The request target as a URL, or undefined when no URL parser would accept it (`//[`, `//:99999`, `http://[/`). */
function requestUrl(target: string | undefined): URL | undefined {
  const text = target ?? '/';
  return URL.canParse(text, BASE) ? new URL(text, BASE) : undefined;
}

const BASE = 'http://labgate.invalid';

/** Writes a complete response (no body for HEAD). */
export function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}
