// The listener of a test server (the LIMS and FHIR test servers): a real node:http(s) server on 127.0.0.1 that
// comes back on the same port after a stop (an outage by refusal, then recovery), tracks its connections so an
// outage can drop them all, and hands each request with its whole body to the server after the configured latency,
// counted from the request's arrival as a client measures the server's own time. Not for production.
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

/** How the listener listens and whom it hands requests to. */
export interface ListenerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Serve HTTPS with this key and certificate (PEM). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  /** Milliseconds to add to the request about to be handled. */
  latencyMs: () => number;
  /** While true, connections are refused and requests dropped unanswered. */
  down: () => boolean;
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;
}

/** A started (or startable) listener. */
export class TestListener {
  private readonly server: HttpServer;
  private readonly sockets = new Set<Socket>();
  private port: number;
  private address = '';

  constructor(private readonly options: ListenerOptions) {
    this.port = options.port ?? 0;
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => void this.handle(req, res);
    this.server = options.tls ? createHttpsServer({ ...options.tls, keepAlive: true }, onRequest) : createServer({ keepAlive: true }, onRequest);
    this.server.keepAliveTimeout = 60_000;
    this.server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => this.track(socket));
  }

  /** scheme://host:port, once started. */
  get origin(): string {
    return this.address;
  }

  /** Listens; after a stop() it comes back on the same port. */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.options.host ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        const addr = this.server.address() as AddressInfo;
        this.port = addr.port;
        this.address = `${this.options.tls ? 'https' : 'http'}://${addr.address}:${addr.port}`;
        resolve();
      });
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Drops every open connection (an outage begins). */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
  }

  private track(socket: Socket): void {
    if (this.options.down()) return void socket.destroy();
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const arrived = performance.now();
      const body = await readBody(req);
      const delay = this.options.latencyMs() - (performance.now() - arrived);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (this.options.down()) return void req.socket.destroy();
      await this.options.handle(req, res, body);
    } catch {
      // The client went away mid-request; there is nobody left to answer.
      req.socket.destroy();
    }
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
