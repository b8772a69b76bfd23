// The Transport over one TCP socket, and the endpoint where labgate connects to the analyzer (tcp-client).
// Reconnecting is not done here: the PortSupervisor reopens it with bounded backoff, so an endpoint only knows how
// to produce one connection. The listening side (tcp-server) is tcp-server.ts.
import { createConnection, type Socket } from 'node:net';
import type { CloseInfo, Transport } from './transport.js';

/** TCP keepalive so a peer that vanished (power cut, pulled network cable) is noticed within minutes. */
const KEEPALIVE_MS = 30_000;
/**
 * Bytes written and not yet taken by the peer beyond which the session ends: an analyzer reads its ACKs, and a peer
 * that floods ENQs without reading would otherwise queue its answers in the gateway's memory without end.
 */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/** A Transport over one connected socket. */
export class SocketTransport implements Transport {
  private dataListeners: ((data: Buffer) => void)[] = [];
  private closeListeners: ((info: CloseInfo) => void)[] = [];
  private closeInfo: CloseInfo | undefined;
  private lastError: Error | undefined;
  /** Epoch ms of the session's start or of the last protocol traffic its driver read (talking()), whichever is later. */
  lastTalkAt: number;
  /** Reading stopped by the driver (pause()) until it resumes it. */
  private paused = false;

  constructor(
    private readonly socket: Socket,
    private readonly now: () => number = Date.now,
  ) {
    this.lastTalkAt = now();
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.on('data', (data: Buffer) => {
      for (const l of this.dataListeners) l(data);
      // One chunk a turn of the event loop: libuv would otherwise read a fast peer many times in one turn, and an
      // instrument babbling over the network would delay the other instruments' commits and ACKs behind its bytes.
      socket.pause();
      setImmediate(() => {
        if (!socket.destroyed && !this.paused) socket.resume();
      });
    });
    socket.on('error', (err) => (this.lastError = err));
    socket.on('close', () =>
      this.finish({ reason: this.lastError ? `connection lost: ${describeError(this.lastError)}` : 'peer closed the connection', error: this.lastError }),
    );
  }

  /** `host:port` of the peer, for logs. */
  get peer(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }

  talking(): void {
    this.lastTalkAt = this.now();
  }

  pause(): void {
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    this.paused = false;
    if (!this.socket.destroyed) this.socket.resume();
  }

  write(data: Buffer): Promise<void> {
    if (this.closeInfo || this.socket.destroyed) return Promise.reject(new Error('transport closed'));
    const written = new Promise<void>((resolve, reject) => this.socket.write(data, (err) => (err ? reject(err) : resolve())));
    if (this.socket.writableLength > MAX_UNREAD_BYTES) void this.end(`the peer left ${this.socket.writableLength} bytes unread; closed by labgate`);
    return written;
  }

  onData(listener: (data: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onClose(listener: (info: CloseInfo) => void): void {
    if (this.closeInfo) queueMicrotask(() => listener(this.closeInfo as CloseInfo));
    else this.closeListeners.push(listener);
  }

  close(): Promise<void> {
    return this.end('closed by labgate');
  }

  /** Closes the session, telling the supervisor (and so the page) why. */
  end(reason: string): Promise<void> {
    if (this.closeInfo) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.closingReason ??= reason;
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
      const timer = setTimeout(
        () => fail(Object.assign(new Error(`connect timeout after ${this.connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
        this.connectTimeoutMs,
      );
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

/** The error an aborted open rejects with. */
export function abortError(): Error {
  return Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}

/** An error's code, or its message when it has none. */
export function describeError(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.message;
}
