// The LIMS sink's connections: a few spare keep-alive connections so that no request waits in the pool for one to be
// handed back, and still never more than `concurrency` requests at the LIMS at once. A real HTTP server on 127.0.0.1
// counts the requests in flight and the connections opened.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleRows } from '../../src/lims-server/sample-rows.js';
import { silentLog } from '../../src/log.js';
import { createLimsSink, limsConnections } from '../../src/sinks/lims.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Counting {
  url: string;
  peak: () => number;
  sockets: () => number;
}

/** Answers every PUT with 201 after `delayMs`, counting requests in flight (and their peak) and connections opened. */
async function countingLims(delayMs: number): Promise<Counting> {
  let inFlight = 0;
  let peak = 0;
  let sockets = 0;
  const server: Server = createServer({ keepAlive: true }, (req, res) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        inFlight--;
        res.writeHead(201, { 'content-type': 'application/json', etag: '"v1"' });
        res.end('{}');
      }, delayMs);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets++;
    s.setNoDelay(true);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, peak: () => peak, sockets: () => sockets };
}

describe('LIMS sink connections', () => {
  it('keeps spare connections beyond concurrency: at least one, about a quarter more', () => {
    for (let c = 1; c <= 64; c++) {
      expect(limsConnections(c)).toBeGreaterThan(c);
      expect(limsConnections(c)).toBeLessThanOrEqual(c + Math.ceil(c / 4));
    }
    expect(limsConnections(16)).toBe(20);
  });

  it('never has more than concurrency requests at the LIMS, however many batches overlap', async () => {
    const lims = await countingLims(5);
    const dir = mkdtempSync(join(tmpdir(), 'lims-conn-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'token'), 'static-token\n');
    const concurrency = 4;
    const sink = createLimsSink(
      {
        baseUrl: lims.url,
        resourcePath: '/api/v1/results',
        concurrency,
        timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
        auth: { kind: 'static', tokenFile: join(dir, 'token') },
      },
      { now: Date.now, log: silentLog, gatewayId: 'gw-test' },
    );
    cleanups.push(() => sink.close());
    const signal = new AbortController().signal;
    const rows = sampleRows(90);
    // Three batches at once, as the drain overlaps them.
    const outcomes = (await Promise.all([0, 30, 60].map((from) => sink.deliver(rows.slice(from, from + 30), signal)))).flat();
    expect(outcomes.map((o) => o.kind)).toEqual(rows.map(() => 'delivered'));
    expect(lims.peak()).toBe(concurrency);
    expect(lims.sockets()).toBeLessThanOrEqual(limsConnections(concurrency));
  });
});
