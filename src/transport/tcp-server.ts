// labgate listens and the analyzer connects (tcp-server). One session at a time per instrument, because two
// senders on one link would interleave their messages. On a lab network anyone can reach the port, so:
// - an optional allow-list names the source addresses that may connect; others are refused at once;
// - a connection that arrives during a session waits its turn (one at a time; a second is refused): an analyzer
//   that connects once per message often reconnects before its previous connection's end has been read here;
// - the waiting connection replaces the session once that has been silent for `replaceSilentMs` (an analyzer that
//   rebooted leaves its old connection half-open, and a stranger's idle connection must not lock the analyzer out),
//   while a session that is talking is never cut short; talking is protocol traffic as its driver reads it
//   (Transport.talking), never mere bytes: a stranger's NUL every 20 s keeps nobody out;
// - an optional idle timeout closes a session that stays silent that long, silent in the same sense: no protocol
//   traffic (bytes alone, and labgate's own writes, keep no session open).
// Every refusal is reported to `onRefused` (the supervisor logs it, summarized, and counts it). The listener stays
// open whatever the clients do: only `close()` ends it.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import type { AllowList } from './allow-list.js';
import { abortError, SocketTransport, type TcpAddress } from './tcp.js';
import type { Transport } from './transport.js';

/** Why a connection was refused (a label on /metrics). */
export type RefusalReason = 'not-allowed' | 'busy';

/** A refused connection: who, and why. */
export interface Refusal {
  peer: string;
  reason: RefusalReason;
}

export interface TcpServerOptions extends TcpAddress {
  /** Absent: any source address may connect. */
  allow?: AllowList;
  /** Closes a session silent this long; 0 or absent: never. */
  idleMs?: number;
  /** A session silent this long gives way to a newer connection. Default 30 s. */
  replaceSilentMs?: number;
  clock?: Clock;
}

/** Silence after which a session gives way to a newer connection: longer than any pause inside an exchange. */
export const REPLACE_SILENT_MS = 30_000;

/** The listening endpoint of one instrument. */
export class TcpServerEndpoint {
  private server: Server | undefined;
  private active: SocketTransport | undefined;
  /** A connection that arrived while the supervisor was between sessions; handed to the next `open`. */
  private queued: Socket | undefined;
  private waiter: { resolve: (t: Transport) => void; reject: (e: Error) => void } | undefined;
  private readonly refusedListeners: ((refusal: Refusal) => void)[] = [];
  private readonly clock: Clock;
  private replaceTimer: unknown;

  constructor(private readonly options: TcpServerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get description(): string {
    return `tcp-listen://${this.options.host}:${this.options.port}`;
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
      server.listen(this.options.port, this.options.host, () => {
        listening = true;
        resolve(server.address() as AddressInfo);
      });
    });
  }

  /** Called for every refused connection. */
  onRefused(listener: (refusal: Refusal) => void): void {
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
      const settle = (): void => signal?.removeEventListener('abort', onAbort);
      this.waiter = { resolve: (t) => (settle(), resolve(t)), reject: (e) => (settle(), reject(e)) };
    });
  }

  /** Stops listening and drops the current session. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.clock.clearTimeout(this.replaceTimer);
    this.waiter?.reject(new Error('endpoint closed'));
    this.waiter = undefined;
    this.queued?.destroy();
    this.queued = undefined;
    await this.active?.close();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    socket.on('error', () => {});
    const peer = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    if (this.options.allow && !this.options.allow.allows(socket.remoteAddress)) return this.refuse(socket, { peer, reason: 'not-allowed' });
    if (this.queued && !this.queued.destroyed) return this.refuse(socket, { peer, reason: 'busy' });
    if (this.waiter && !this.active) {
      const waiter = this.waiter;
      this.waiter = undefined;
      return waiter.resolve(this.session(socket));
    }
    // Held for the supervisor's next open, which follows the current session's end (or comes any moment now).
    this.queued = socket;
    socket.once('close', () => {
      if (this.queued === socket) this.queued = undefined;
    });
    this.replaceWhenSilent(peer);
  }

  // Ends the session once it has been silent long enough, while a connection waits; rechecks if it talked meanwhile.
  private replaceWhenSilent(peer: string): void {
    this.clock.clearTimeout(this.replaceTimer);
    const active = this.active;
    if (!active || !this.queued || this.queued.destroyed) return;
    const silentMs = this.clock.monotonic() - active.lastTalkAt;
    const wait = (this.options.replaceSilentMs ?? REPLACE_SILENT_MS) - silentMs;
    if (wait > 0) return void (this.replaceTimer = this.clock.setTimeout(() => this.replaceWhenSilent(peer), wait));
    void active.end(`replaced by a newer connection from ${peer} after ${Math.round(silentMs / 1000)} s of silence`);
  }

  private refuse(socket: Socket, refusal: Refusal): void {
    socket.destroy();
    for (const l of this.refusedListeners) l(refusal);
  }

  private session(socket: Socket): SocketTransport {
    const transport = new SocketTransport(socket, () => this.clock.monotonic());
    this.active = transport;
    transport.onClose(() => {
      if (this.active !== transport) return;
      this.active = undefined;
      this.clock.clearTimeout(this.replaceTimer);
    });
    const idleMs = this.options.idleMs ?? 0;
    if (idleMs > 0) this.closeWhenIdle(transport, idleMs);
    return transport;
  }

  // Not the socket's own timeout, which any byte either way restarts: a stranger's NUL now and then would hold it open.
  private closeWhenIdle(transport: SocketTransport, idleMs: number): void {
    let timer: unknown;
    const check = (): void => {
      const silentMs = this.clock.monotonic() - transport.lastTalkAt;
      if (silentMs < idleMs) return void (timer = this.clock.setTimeout(check, idleMs - silentMs));
      void transport.end(`no traffic for ${Math.round(silentMs / 1000)} s; closed by labgate`);
    };
    timer = this.clock.setTimeout(check, idleMs);
    transport.onClose(() => this.clock.clearTimeout(timer));
  }
}
