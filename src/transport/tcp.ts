// TCP transports, both ways round. Reconnecting is not done here: the PortSupervisor reopens every kind of
// transport with the same bounded backoff, so an endpoint only knows how to produce one connection.
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { CloseInfo, Transport } from './transport.js';

/** TCP keepalive so a peer that vanished (power cut, pulled network cable) is noticed within minutes. */
const KEEPALIVE_MS = 30_000;

/** A Transport over one connected socket. */
export class SocketTransport implements Transport {
  private dataListeners: ((data: Buffer) => void)[] = [];
  private closeListeners: ((info: CloseInfo) => void)[] = [];
  private closeInfo: CloseInfo | undefined;
  private lastError: Error | undefined;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.on('data', (data: Buffer) => {
      for (const l of this.dataListeners) l(data);
    });
    socket.on('error', (err) => (this.lastError = err));
    socket.on('close', () => this.finish({ reason: this.lastError ? `connection lost: ${describeError(this.lastError)}` : 'peer closed the connection', error: this.lastError }));
  }

  /** `host:port` of the peer, for logs. */
  get peer(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }

  write(data: Buffer): Promise<void> {
    if (this.closeInfo || this.socket.destroyed) return Promise.reject(new Error('transport closed'));
    return new Promise((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
  }

  onData(listener: (data: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onClose(listener: (info: CloseInfo) => void): void {
    if (this.closeInfo) queueMicrotask(() => listener(this.closeInfo as CloseInfo));
    else this.closeListeners.push(listener);
  }

  close(): Promise<void> {
    if (this.closeInfo) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.closingReason = 'closed by labgate';
      this.socket.destroy();
    });
  }

  private closingReason: string | undefined;

  private finish(info: CloseInfo): void {
    if (this.closeInfo) return;
    this.closeInfo = this.closingReason ? { reason: this.closingReason } : info;
    for (const l of this.closeListeners) l(this.closeInfo);
    this.closeListeners = [];
  }
}

export interface TcpAddress {
  host: string;
  port: number;
}

/** labgate connects to the analyzer (or its terminal server). One attempt per `open`; the supervisor retries. */
export class TcpClientEndpoint {
  constructor(
    private readonly address: TcpAddress,
    private readonly connectTimeoutMs = 10_000,
  ) {}

  /** `tcp://host:port`, for logs and the status page. */
  get description(): string {
    return `tcp://${this.address.host}:${this.address.port}`;
  }

  /** Connects once; rejects with the socket error (ECONNREFUSED, ETIMEDOUT, ...) or on abort. */
  open(signal?: AbortSignal): Promise<Transport> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      const socket = createConnection({ host: this.address.host, port: this.address.port });
      const fail = (err: Error): void => {
        cleanup();
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(() => fail(Object.assign(new Error(`connect timeout after ${this.connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })), this.connectTimeoutMs);
      const onAbort = (): void => fail(abortError());
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', fail);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', fail);
      socket.once('connect', () => {
        cleanup();
        resolve(new SocketTransport(socket));
      });
    });
  }

  async close(): Promise<void> {}
}

/**
 * labgate listens and the analyzer connects. One connection at a time per instrument: while a session is
 * open, another connection is refused (closed at once), because two senders on one link would interleave.
 */
export class TcpServerEndpoint {
  private server: Server | undefined;
  private active: SocketTransport | undefined;
  /** A connection that arrived while the supervisor was between sessions; handed to the next `open`. */
  private queued: Socket | undefined;
  private waiter: { resolve: (t: Transport) => void; reject: (e: Error) => void } | undefined;
  private readonly refusedListeners: ((peer: string) => void)[] = [];

  constructor(private readonly address: TcpAddress) {}

  get description(): string {
    return `tcp-listen://${this.address.host}:${this.address.port}`;
  }

  /** Starts listening; resolves with the bound address (port 0 picks a free one). */
  listen(): Promise<AddressInfo> {
    if (this.server) return Promise.resolve(this.server.address() as AddressInfo);
    const server = createServer((socket) => this.accept(socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      let listening = false;
      // After listening, an accept error (EMFILE) must not crash the gateway; the next connection retries.
      server.on('error', (err) => {
        if (listening) return;
        this.server = undefined;
        reject(err);
      });
      server.listen(this.address.port, this.address.host, () => {
        listening = true;
        resolve(server.address() as AddressInfo);
      });
    });
  }

  /** Called with the peer address when a second connection is refused. */
  onRefused(listener: (peer: string) => void): void {
    this.refusedListeners.push(listener);
  }

  /** Waits for the analyzer's next connection (listening first if needed). Rejects on abort or when closed. */
  async open(signal?: AbortSignal): Promise<Transport> {
    await this.listen();
    if (signal?.aborted) throw abortError();
    const queued = this.queued;
    this.queued = undefined;
    if (queued && !queued.destroyed) return this.session(queued);
    if (this.waiter) throw new Error('already waiting for a connection');
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.waiter = undefined;
        reject(abortError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = {
        resolve: (t) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(t);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
    });
  }

  /** Stops listening and drops the current session. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.waiter?.reject(new Error('endpoint closed'));
    this.waiter = undefined;
    this.queued?.destroy();
    this.queued = undefined;
    await this.active?.close();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    if (this.waiter && !this.active) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve(this.session(socket));
    } else if (!this.active && !this.queued) {
      this.queued = socket;
      socket.once('close', () => {
        if (this.queued === socket) this.queued = undefined;
      });
    } else {
      for (const l of this.refusedListeners) l(`${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`);
      socket.destroy();
    }
  }

  private session(socket: Socket): SocketTransport {
    const transport = new SocketTransport(socket);
    this.active = transport;
    transport.onClose(() => {
      if (this.active === transport) this.active = undefined;
    });
    return transport;
  }
}

function abortError(): Error {
  return Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}

function describeError(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.message;
}
