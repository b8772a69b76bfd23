import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { silentLog, type Log } from '../../src/log.js';
import { PortSupervisor } from '../../src/transport/supervisor.js';
import { TcpClientEndpoint } from '../../src/transport/tcp.js';
import { TcpServerEndpoint } from '../../src/transport/tcp-server.js';
import type { CloseInfo, Transport } from '../../src/transport/transport.js';

const quiet: Log = silentLog;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

function connect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

function collect(socket: Socket): { socket: Socket; text: () => string; closed: () => boolean } {
  let text = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.on('close', () => (closed = true));
  return { socket, text: () => text, closed: () => closed };
}

/** An endpoint on a free port, one analyzer connected to it, and the session labgate opened for that analyzer. */
async function oneSession(): Promise<{ analyzer: Socket; transport: Transport }> {
  const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => endpoint.close());
  const { port } = await endpoint.listen();
  const opened = endpoint.open();
  const analyzer = await connect(port);
  cleanups.push(() => void analyzer.destroy());
  return { analyzer, transport: await opened };
}

describe('TcpServerEndpoint (labgate listens)', () => {
  it('carries bytes both ways and reports the peer closing', async () => {
    const { analyzer, transport } = await oneSession();
    const seen = collect(analyzer);
    const received: string[] = [];
    let closed: CloseInfo | undefined;
    transport.onData((d) => received.push(d.toString('latin1')));
    transport.onClose((info) => (closed = info));
    analyzer.write('\x05');
    await transport.write(Buffer.from('\x06'));
    await until(() => received.join('') === '\x05' && seen.text() === '\x06');
    analyzer.end();
    await until(() => closed !== undefined);
    expect(closed?.reason).toBe('peer closed the connection');
  });

  it('takes one chunk of a fast peer per turn of the event loop, every byte in order', async () => {
    const { analyzer, transport } = await oneSession();
    // A turn counter the loop advances once per check phase; two chunks in one turn would share a number.
    let turn = 0;
    let ticking = true;
    const tick = (): void => {
      turn += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    cleanups.push(() => void (ticking = false));
    const turns: number[] = [];
    let bytes = 0;
    let sum = 0;
    transport.onData((d) => {
      turns.push(turn);
      bytes += d.length;
      for (const b of d) sum = (sum * 31 + b) % 1_000_003;
    });
    const sent = Buffer.alloc(8 * 1024 * 1024, 0);
    for (let i = 0; i < sent.length; i += 1) sent[i] = (i * 7) % 251;
    let expected = 0;
    for (const b of sent) expected = (expected * 31 + b) % 1_000_003;
    analyzer.write(sent);
    await until(() => bytes === sent.length, 20_000);
    expect(sum).toBe(expected);
    expect(turns.length).toBeGreaterThan(2);
    expect(new Set(turns).size).toBe(turns.length);
  });

  it('accepts one session at a time per instrument: one more connection waits its turn, a third is refused', async () => {
    const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => endpoint.close());
    const refused: string[] = [];
    endpoint.onRefused((r) => refused.push(`${r.reason} ${r.peer}`));
    const { port } = await endpoint.listen();
    const opened = endpoint.open();
    const first = await connect(port);
    const transport = await opened;
    const second = collect(await connect(port));
    cleanups.push(() => void second.socket.destroy());
    const third = collect(await connect(port));
    await until(() => third.closed());
    expect(second.closed()).toBe(false);
    expect(refused).toEqual([expect.stringMatching(/^busy 127\.0\.0\.1:\d+$/)]);
    const received: string[] = [];
    transport.onData((d) => received.push(d.toString()));
    first.write('still here');
    await until(() => received.join('') === 'still here');
    first.destroy();
  });

  it('holds a connection that arrives between sessions for the next open', async () => {
    const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => endpoint.close());
    const { port } = await endpoint.listen();
    const analyzer = await connect(port);
    analyzer.write('early bytes');
    await new Promise((r) => setTimeout(r, 50));
    const transport = await endpoint.open();
    const received: string[] = [];
    transport.onData((d) => received.push(d.toString()));
    await until(() => received.join('') === 'early bytes');
    analyzer.destroy();
  });

  it('open rejects on abort', async () => {
    const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0 });
    cleanups.push(() => endpoint.close());
    const abort = new AbortController();
    const opened = endpoint.open(abort.signal);
    abort.abort();
    await expect(opened).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('TcpClientEndpoint (labgate connects)', () => {
  function analyzerServer(port = 0): Promise<{ server: Server; port: number; sockets: Socket[]; text: () => string }> {
    const sockets: Socket[] = [];
    let text = '';
    const server = createServer((s) => {
      sockets.push(s);
      s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    });
    return new Promise((resolve) =>
      server.listen(port, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, sockets, text: () => text })),
    );
  }

  it('rejects with ECONNREFUSED when nothing listens', async () => {
    const { server, port } = await analyzerServer();
    await new Promise((r) => server.close(r));
    await expect(new TcpClientEndpoint({ host: '127.0.0.1', port }).open()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('reconnects with backoff under the supervisor when the server goes away and comes back', async () => {
    let analyzer = await analyzerServer();
    const port = analyzer.port;
    const endpoint = new TcpClientEndpoint({ host: '127.0.0.1', port }, 1_000);
    const sessions: Transport[] = [];
    const supervisor = new PortSupervisor({
      instrument: 'hema1',
      endpoint: endpoint.description,
      open: (signal) => endpoint.open(signal),
      attach: (t) => {
        sessions.push(t);
        void t.write(Buffer.from(`hello${sessions.length}`));
        return { stop: async () => {} };
      },
      clock: systemClock,
      log: quiet,
      policy: { baseMs: 50, capMs: 400, stableMs: 10_000 },
    });
    cleanups.push(() => supervisor.stop());
    supervisor.start();
    await until(() => analyzer.text() === 'hello1');
    expect(supervisor.snapshot().state).toBe('connected');

    // The analyzer (or its terminal server) goes away: connection drops, then refused for a while.
    for (const s of analyzer.sockets) s.destroy();
    await new Promise((r) => analyzer.server.close(r));
    await until(() => supervisor.snapshot().state === 'waiting-for-device' && supervisor.snapshot().failedOpens >= 3);
    expect(supervisor.snapshot().reason).toMatch(/device not available: .*ECONNREFUSED/);

    analyzer = await analyzerServer(port);
    cleanups.push(() => new Promise<void>((r) => analyzer.server.close(() => r())));
    await until(() => analyzer.text() === 'hello2');
    expect(supervisor.snapshot()).toMatchObject({ state: 'connected', reconnects: 1 });
    await supervisor.stop();
    for (const s of analyzer.sockets) s.destroy();
  });
});
