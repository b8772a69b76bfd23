// A sink that goes down and comes back as a network outage does: a TCP relay in front of the real server (the
// shared PostgreSQL, the LIMS test server) that, when pulled, stops listening and cuts every open connection, so
// the gateway sees refused connects and reset sockets while the server behind it and what it holds stay as they are.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** A TCP relay from 127.0.0.1:`port` to `target`; `down()` refuses and cuts, `up()` listens again on the same port. */
export class SinkSwitch {
  private server: Server | undefined;
  private readonly open = new Set<Socket>();
  port = 0;
  /** Outages so far. */
  outages = 0;

  constructor(
    readonly name: string,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens (on a port of its own the first time, the same one after). */
  async up(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and resets every relayed connection. */
  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.outages++;
    const closed = new Promise<void>((r) => server.close(() => r()));
    for (const s of this.open) s.resetAndDestroy();
    await closed;
  }

  get isUp(): boolean {
    return this.server !== undefined;
  }

  private relay(client: Socket): void {
    const upstream = createConnection(this.target.port, this.target.host);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.open.add(a);
      a.on('error', () => b.destroy());
      a.on('close', () => {
        this.open.delete(a);
        b.destroy();
      });
      a.pipe(b);
    }
  }
}
