// A small TCP proxy to put between a sink and PostgreSQL: cut() drops every connection and refuses new ones
// (as a dead network or a restarting server would), restore() lets traffic through again; dropAnswers(n) resets the
// connection of each of the next n statements when the server's answer arrives (the statement ran, its answer is
// lost: a connection reset mid-batch). The shared server itself is never stopped.
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A cuttable TCP proxy on 127.0.0.1. */
export class TcpProxy {
  private up = true;
  private answersToDrop = 0;
  private readonly sockets = new Set<Socket>();
  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free port and forwards to host:port. */
  static async start(host: string, port: number): Promise<TcpProxy> {
    const holder: { proxy?: TcpProxy } = {};
    const server = createServer((client) => (holder.proxy ? holder.proxy.accept(client, host, port) : client.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    if (address === null || typeof address !== 'object') throw new Error('proxy has no address');
    holder.proxy = new TcpProxy(server, address.port);
    return holder.proxy;
  }

  /** Rewrites a postgres:// URL to go through the proxy. */
  url(target: string): string {
    const u = new URL(target);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Drops every open connection and refuses new ones until restore(). */
  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.up = true;
  }

  /** Resets the connection of each of the next `n` statements (Parse or Query messages) once the server answers. */
  dropAnswers(n: number): void {
    this.answersToDrop = n;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, host: string, port: number): void {
    if (!this.up) {
      client.destroy();
      return;
    }
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    // A statement's messages start a chunk (pg writes them at once): 'P' Parse, 'Q' simple Query (the frontend/backend protocol's message formats).
    let dropping = false;
    client.on('data', (chunk: Buffer) => {
      if (!dropping && this.answersToDrop > 0 && (chunk[0] === 0x50 || chunk[0] === 0x51)) {
        dropping = true;
        this.answersToDrop--;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!dropping) return void client.write(chunk);
      client.destroy();
      upstream.destroy();
    });
  }
}
