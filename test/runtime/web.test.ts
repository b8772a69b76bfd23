import { afterEach, describe, expect, it } from 'vitest';
import { silentLog, type Log } from '../../src/log.js';
import type { DiskStatus } from '../../src/disk-guard.js';
import { Metrics } from '../../src/metrics.js';
import type { PortStatus } from '../../src/transport/supervisor.js';
import { evaluateHealth, healthRoute, type HealthReport } from '../../src/web/health.js';
import type { SinkHealth } from '../../src/delivery/sink-health.js';
import { metricsRoute } from '../../src/web/metrics.js';
import { WebServer, type Route } from '../../src/web/server.js';

const quiet: Log = silentLog;
const thresholds = { backlog: 100, oldestAgeMinutes: 10 };
const servers: WebServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

const port = (instrument: string, state: PortStatus['state'], reason?: string): PortStatus => ({
  instrument,
  endpoint: `/dev/serial/by-id/${instrument}`,
  state,
  since: 0,
  reconnects: 0,
  failedOpens: 0,
  counters: { messages: 0, inserted: 0, rejected: 0, naks: 0, checksumErrors: 0, discarded: 0 },
  ...(reason ? { reason } : {}),
});

function world() {
  const state = {
    ready: true,
    writable: true,
    disk: { path: '/var/lib/labgate', freeBytes: 5e9, floorBytes: 2e8, accepting: true, checkedAt: 0 } as DiskStatus,
    instruments: [port('chem1', 'connected'), port('hema1', 'connected')],
    sinks: [
      { sink: 'postgres', pending: 0, oldestAgeSeconds: 0, dead: 0 },
      { sink: 'lims', pending: 3, oldestAgeSeconds: 20, dead: 0, circuit: 'closed' },
    ] as SinkHealth[],
  };
  const sources = {
    ready: () => state.ready,
    store: () => ({ writable: state.writable }),
    disk: () => state.disk,
    instruments: () => state.instruments,
    sinks: () => state.sinks,
    thresholds,
  };
  return { state, sources };
}

async function serve(w: ReturnType<typeof world>, metrics: Metrics): Promise<string> {
  const server = new WebServer({ host: '127.0.0.1', port: 0, log: quiet, routes: [healthRoute(w.sources), metricsRoute(metrics)] });
  servers.push(server);
  const address = await server.start();
  return `http://127.0.0.1:${address.port}`;
}

describe('/healthz over real HTTP', () => {
  it('is ok, degraded or failing with reasons', async () => {
    const w = world();
    const base = await serve(w, new Metrics({ now: () => 0 }));
    const get = async (): Promise<{ status: number; body: HealthReport }> => {
      const res = await fetch(`${base}/healthz`);
      return { status: res.status, body: (await res.json()) as HealthReport };
    };
    expect(await get()).toMatchObject({ status: 200, body: { status: 'ok', reasons: [] } });

    w.state.instruments[1] = port('hema1', 'waiting-for-device', 'device unplugged');
    w.state.sinks[1] = { sink: 'lims', pending: 250, oldestAgeSeconds: 3600, dead: 2, circuit: 'open', reason: 'HTTP 503' };
    const degraded = await get();
    expect(degraded.status).toBe(200);
    expect(degraded.body.status).toBe('degraded');
    expect(degraded.body.reasons).toEqual([
      'instrument hema1: waiting-for-device (device unplugged)',
      'sink lims: 250 pending, over the alert threshold of 100',
      'sink lims: oldest pending result is 60 min old, over 10 min',
      'sink lims: paused (HTTP 503)',
      'sink lims: 2 dead letters need an operator',
    ]);

    w.state.disk = { ...w.state.disk, freeBytes: 1e8, accepting: false, reason: '95 MB free on /var/lib/labgate, below the floor of 190 MB' };
    const failing = await get();
    expect(failing.status).toBe(503);
    expect(failing.body.status).toBe('failing');
    expect(failing.body.reasons[0]).toBe('disk: 95 MB free on /var/lib/labgate, below the floor of 190 MB; not accepting results');
  });

  it('a provider that throws makes it failing, not a 500', async () => {
    const w = world();
    w.sources.store = () => {
      throw new Error('SQLITE_IOERR');
    };
    const base = await serve(w, new Metrics({ now: () => 0 }));
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as HealthReport).reasons).toContain('store: SQLITE_IOERR');
  });

  it('answers 404 and 405 for what it does not serve', async () => {
    const base = await serve(world(), new Metrics({ now: () => 0 }));
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const res = await fetch(`${base}/healthz`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('WebServer guard', () => {
  it('runs before routing and can answer the request itself', async () => {
    const w = world();
    const server = new WebServer({
      host: '127.0.0.1',
      port: 0,
      log: quiet,
      routes: [healthRoute(w.sources)],
      guard: (req, res, url) => {
        if (url.pathname === '/healthz' || req.headers['authorization'] === 'Bearer ok') return true;
        res.writeHead(401).end();
        return false;
      },
    });
    servers.push(server);
    const { port } = await server.start();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/status`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/status`, { headers: { authorization: 'Bearer ok' } })).status).toBe(404);
  });

  it('turns a throwing guard or handler into a 500 for that request alone, and leaves no rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const onRejection = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onRejection);
    const logged: object[] = [];
    const server = new WebServer({
      host: '127.0.0.1',
      port: 0,
      log: { ...quiet, error: (obj) => void logged.push(obj) },
      routes: [
        {
          method: 'GET',
          path: '/sync',
          handler: () => {
            throw new Error('sync');
          },
        },
        { method: 'GET', path: '/async', handler: async () => Promise.reject(new Error('async')) },
        { method: 'GET', path: '/ok', handler: (_req, res) => void res.end('ok') },
      ],
      guard: (_req, _res, url) => {
        if (url.pathname === '/guard') throw new Error('guard');
        return true;
      },
    });
    servers.push(server);
    const { port } = await server.start();
    try {
      for (const path of ['/sync', '/async', '/guard']) expect((await fetch(`http://127.0.0.1:${port}${path}`)).status, path).toBe(500);
      expect(await (await fetch(`http://127.0.0.1:${port}/ok`)).text()).toBe('ok');
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      expect(logged).toHaveLength(3);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});

describe('WebServer routes on demand', () => {
  const text = (body: string): Route => ({ method: 'GET', path: `/${body}`, handler: (_req, res) => void res.end(body) });

  it('builds them once, on the first request no other route answers, after the guard; /healthz never builds them', async () => {
    const w = world();
    let loads = 0;
    let release = (): void => {};
    const held = new Promise<void>((r) => (release = r));
    const server = new WebServer({
      host: '127.0.0.1',
      port: 0,
      log: quiet,
      routes: [healthRoute(w.sources)],
      guard: (req, res) => {
        if (req.headers['authorization'] === 'Bearer ok') return true;
        res.writeHead(401).end();
        return false;
      },
    });
    server.routesOnDemand(async () => {
      loads++;
      await held;
      return [text('page'), { method: 'POST', path: '/healthz', handler: (_req, res) => void res.end('posted') }];
    });
    servers.push(server);
    const { port } = await server.start();
    const get = (path: string, init: RequestInit = {}): Promise<Response> =>
      fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { authorization: 'Bearer ok' } });
    expect((await get('/healthz')).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/page`)).status).toBe(401);
    expect(loads).toBe(0);
    // Requests that arrive while the routes are built wait for that one build.
    const waiting = [get('/page'), get('/page'), get('/healthz', { method: 'POST' })];
    await new Promise((r) => setTimeout(r, 50));
    release();
    const answers = await Promise.all(waiting.map(async (r) => (await r).text()));
    expect(answers).toEqual(['page', 'page', 'posted']);
    expect((await get('/missing')).status).toBe(404);
    expect(loads).toBe(1);
  });

  it('answers 500 while building them fails, and builds them at the next request', async () => {
    const logged: object[] = [];
    let fail = true;
    const server = new WebServer({ host: '127.0.0.1', port: 0, log: { ...quiet, error: (obj) => void logged.push(obj) } });
    server.routesOnDemand(async () => {
      if (fail) throw new Error('cannot load the pages');
      return [text('page')];
    });
    servers.push(server);
    const { port } = await server.start();
    expect((await fetch(`http://127.0.0.1:${port}/page`)).status).toBe(500);
    expect(logged).toHaveLength(1);
    fail = false;
    expect(await (await fetch(`http://127.0.0.1:${port}/page`)).text()).toBe('page');
  });
});

describe('evaluateHealth', () => {
  it('is failing while recovery runs and when the store is not writable', () => {
    const snapshot = { ready: false, store: { writable: false, reason: 'SQLITE_FULL' }, instruments: [], sinks: [] };
    expect(evaluateHealth(snapshot, thresholds)).toMatchObject({
      status: 'failing',
      reasons: ['starting: store recovery not finished', 'store not writable: SQLITE_FULL'],
    });
  });
});

describe('/metrics over real HTTP', () => {
  it('exposes the counters the runtime feeds, in Prometheus text format', async () => {
    let now = 1_000_000;
    const metrics = new Metrics({ now: () => now, drainWindowSeconds: 60, twoWay: (id) => id === 'hema1' });
    const w = world();
    metrics.setBacklogSource(() => [
      { sink: 'postgres', pending: 7, oldestAgeSeconds: 42, dead: 1, circuit: 'open' },
      { sink: 'lims', pending: 0, oldestAgeSeconds: 0, dead: 0, conflicts: 2 },
    ]);
    metrics.setGatewaySource(() => ({ lastMessages: [{ instrument: 'chem1', at: 1_700_000_000_500 }], walBytes: 4096 }));
    metrics.driverEvent('chem1', { kind: 'orders', figure: 'queries' });
    metrics.driverEvent('chem1', { kind: 'orders', figure: 'no-information:lims-unavailable', answeredInMs: 1800 });
    metrics.driverEvent('chem1', { kind: 'message', summary: { captureId: 1, inserted: 3, absorbed: 1, conflicts: 1, rejected: 2 }, receivedAt: 0 });
    metrics.driverEvent('chem1', { kind: 'nak', reason: 'checksum' });
    metrics.driverEvent('chem1', { kind: 'checksum-error' });
    metrics.driverEvent('chem1', { kind: 'bytes', count: 512 });
    metrics.portStatus({ ...port('chem1', 'connected'), reconnects: 2 });
    metrics.portStatus({ ...port('chem1', 'connected'), reconnects: 2 });
    metrics.portStatus(port('hema1', 'error', 'EACCES'));
    metrics.delivery('postgres', 'delivered', 30, [250, 1500, 90_000]);
    now += 10_000;
    metrics.delivery('postgres', 'delivered', 30);
    metrics.delivery('lims', 'retry', 4);
    metrics.delivery('lims', 'dead', 1);
    let figures = { commits: 4, fsyncs: 3, messages: 11 };
    metrics.setCommitSource(() => figures);

    const base = await serve(w, metrics);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    for (const line of [
      'labgate_messages_total{instrument="chem1"} 1',
      'labgate_results_total{instrument="chem1",outcome="inserted"} 3',
      'labgate_results_total{instrument="chem1",outcome="absorbed"} 1',
      'labgate_results_total{instrument="chem1",outcome="conflict"} 1',
      'labgate_results_total{instrument="chem1",outcome="rejected"} 2',
      'labgate_naks_total{instrument="chem1"} 1',
      'labgate_checksum_errors_total{instrument="chem1"} 1',
      'labgate_received_bytes_total{instrument="chem1"} 512',
      'labgate_port_reconnects_total{instrument="chem1"} 2',
      'labgate_port_state{instrument="chem1",state="connected"} 1',
      'labgate_port_state{instrument="hema1",state="error"} 1',
      'labgate_port_state{instrument="hema1",state="connected"} 0',
      'labgate_sink_pending{sink="postgres"} 7',
      'labgate_sink_oldest_pending_age_seconds{sink="postgres"} 42',
      'labgate_sink_dead{sink="postgres"} 1',
      'labgate_sink_conflicts{sink="lims"} 2',
      'labgate_sink_outcomes_total{sink="postgres",outcome="delivered"} 60',
      'labgate_sink_outcomes_total{sink="lims",outcome="retry"} 4',
      'labgate_sink_drain_rate{sink="postgres"} 1',
      'labgate_sink_drain_rate{sink="lims"} 0',
      'labgate_delivery_latency_seconds_bucket{le="0.5",sink="postgres"} 1',
      'labgate_delivery_latency_seconds_count{sink="postgres"} 3',
      'labgate_store_commits_total 4',
      'labgate_store_committed_messages_total 11',
      'labgate_store_wal_fsyncs_total 3',
      'labgate_sink_circuit_state{sink="postgres",state="open"} 1',
      'labgate_sink_circuit_state{sink="postgres",state="closed"} 0',
      'labgate_instrument_last_message_timestamp_seconds{instrument="chem1"} 1700000000.5',
      'labgate_store_wal_bytes 4096',
      'labgate_host_queries_total{instrument="chem1"} 1',
      'labgate_query_answers_total{instrument="chem1",answer="no-information",reason="lims-unavailable"} 1',
      'labgate_query_answer_seconds_bucket{le="1",instrument="chem1"} 0',
      'labgate_query_answer_seconds_bucket{le="2",instrument="chem1"} 1',
    ]) {
      expect(text).toContain(line);
    }
    // An instrument's and a sink's counters exist from their first appearance, at 0 until something happens.
    for (const line of [
      'labgate_discarded_messages_total{instrument="hema1"} 0',
      'labgate_results_total{instrument="hema1",outcome="rejected"} 0',
      'labgate_sink_outcomes_total{sink="lims",outcome="dead"} 1',
      'labgate_sink_outcomes_total{sink="lims",outcome="delivered"} 0',
      'labgate_sink_outcomes_total{sink="postgres",outcome="conflict"} 0',
      'labgate_delivery_latency_seconds_count{sink="lims"} 0',
      // hema1 is two-way: its queries, answers by reason and time to answer start at 0 too; chem1's do not exist.
      'labgate_host_queries_total{instrument="hema1"} 0',
      'labgate_query_answers_total{instrument="hema1",answer="no-information",reason="lims-timeout"} 0',
      'labgate_query_answer_seconds_count{instrument="hema1"} 0',
    ]) {
      expect(text).toContain(line);
    }
    expect(text).not.toContain('labgate_query_answers_total{instrument="chem1",answer="orders"');
    // A sink whose drain reports no circuit has none; a figure not measured yet is absent, never 0.
    expect(text).not.toContain('labgate_sink_circuit_state{sink="lims"');
    expect(text).not.toMatch(/^labgate_disk_(free|floor)_bytes /m);
    // Read again at each scrape, never added up twice.
    figures = { commits: 5, fsyncs: 4, messages: 12 };
    const again = await (await fetch(`${base}/metrics`)).text();
    for (const line of ['labgate_store_commits_total 5', 'labgate_store_committed_messages_total 12', 'labgate_store_wal_fsyncs_total 4']) {
      expect(again).toContain(line);
    }
    now += 120_000;
    expect(metrics.drainRate('postgres')).toBe(0);
  });

  it('adds process metrics when asked', async () => {
    const metrics = new Metrics({ now: () => 0 });
    metrics.collectProcessMetrics();
    const { body } = await metrics.render();
    expect(body).toContain('labgate_process_resident_memory_bytes');
    // Sampled every 100 ms instead of 10 (runtime.idle.cpu in the bench), still reported.
    expect(body).toContain('labgate_nodejs_eventloop_lag_p99_seconds');
  });
});
