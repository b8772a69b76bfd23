// The HTTP listener's connection budget over real sockets: idle and half-sent connections are closed, the number
// held never passes the cap, and a new request still gets through a flood of idle connections.
import { createConnection, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLog, type Log } from '../../src/log.js';
import { send, WebServer, type HttpLimits } from '../../src/web/server.js';
import { until } from '../fixtures/until.js';

const quiet: Log = silentLog;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(limits: Partial<HttpLimits>, slow?: Promise<void>): Promise<{ server: WebServer; port: number }> {
  const server = new WebServer({
    host: '127.0.0.1',
    port: 0,
    log: quiet,
    limits,
    routes: [
      { method: 'GET', path: '/healthz', handler: (_req, res) => send(res, 200, 'text/plain', 'ok\n') },
      {
        method: 'GET',
        path: '/slow',
        handler: async (_req, res) => {
          await slow;
          send(res, 200, 'text/plain', 'slow\n');
        },
      },
    ],
  });
  cleanups.push(() => server.stop());
  const { port } = await server.start();
  return { server, port };
}

/** A client socket that records when the server closes it. */
async function open(port: number, first?: string): Promise<{ socket: Socket; closed: () => boolean; text: () => string }> {
  const socket = createConnection(port, '127.0.0.1');
  cleanups.push(() => void socket.destroy());
  let closed = false;
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('close', () => resolve()));
  if (first !== undefined) socket.write(first);
  return { socket, closed: () => closed, text: () => text };
}

describe('WebServer connection limits', () => {
  it('closes a connection that never sends a byte after the idle timeout', async () => {
    const { server, port } = await serve({ idleMs: 200 });
    const idle = await open(port);
    await until(() => server.connections().open === 1);
    await until(() => idle.closed(), 3_000);
    expect(server.connections().open).toBe(0);
  });

  it('answers 408 and closes a request whose headers never finish', async () => {
    const { port } = await serve({ headersMs: 300, idleMs: 60_000 });
    const half = await open(port, 'GET /healthz HTTP/1.1\r\nHo');
    await until(() => half.closed(), 4_000);
    expect(half.text()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('holds at most max sockets, closing the oldest idle one, and /healthz gets through a flood', async () => {
    const { server, port } = await serve({ max: 8, idleMs: 60_000 });
    const flood: Awaited<ReturnType<typeof open>>[] = [];
    for (let i = 0; i < 40; i++) flood.push(await open(port));
    await until(() => flood.filter((f) => !f.closed()).length <= 8);
    expect(server.connections().open).toBeLessThanOrEqual(8);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    expect(await res.text()).toBe('ok\n');
    expect(
      flood.slice(0, 30).every((f) => f.closed()),
      'the oldest idle sockets were closed',
    ).toBe(true);
    expect(server.connections()).toMatchObject({ refused: 0 });
    expect(server.connections().evicted).toBeGreaterThanOrEqual(32);
  });

  it('never closes a socket in the middle of a request; when every socket is busy, a new one is refused', async () => {
    let release = (): void => {};
    const slow = new Promise<void>((r) => (release = r));
    const { server, port } = await serve({ max: 2, idleMs: 60_000 }, slow);
    const busy = [await open(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'), await open(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n')];
    await until(() => server.connections().open === 2);
    await new Promise((r) => setTimeout(r, 50));
    const third = await open(port);
    await until(() => third.closed());
    expect(server.connections()).toMatchObject({ open: 2, refused: 1, evicted: 0 });
    release();
    await until(() => busy.every((b) => b.text().includes('slow')));
  });
});
