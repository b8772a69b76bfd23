// An instrument's listening port on a lab network, over real sockets: the allow-list, the idle timeout, a newer
// connection replacing a silent session, refusals counted and logged (summarized), and a port that keeps listening
// however its clients come and go (no reconnect backoff for a listener).
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { systemClock } from '../../src/clock.js';
import { silentLog, type Log } from '../../src/log.js';
import { bindInstruments, loadDrivers } from '../../src/driver-registry.js';
import { superviseInstruments } from '../../src/gateway/instruments.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { AllowList, isAddressOrBlock } from '../../src/transport/allow-list.js';
import { PortSupervisor } from '../../src/transport/supervisor.js';
import { TcpServerEndpoint, type Refusal } from '../../src/transport/tcp-server.js';
import type { CloseInfo, Transport } from '../../src/transport/transport.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { until } from '../fixtures/until.js';

const quiet: Log = silentLog;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A client socket from `localAddress` (any 127.x.y.z is this machine); `closed()` turns true when the server drops it. */
async function dial(port: number, localAddress = '127.0.0.1'): Promise<{ socket: Socket; closed: () => boolean }> {
  const socket = createConnection({ host: '127.0.0.1', port, localAddress });
  cleanups.push(() => void socket.destroy());
  let closed = false;
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('close', () => resolve()));
  return { socket, closed: () => closed };
}

async function listening(options: Partial<ConstructorParameters<typeof TcpServerEndpoint>[0]> = {}) {
  const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0, ...options });
  cleanups.push(() => endpoint.close());
  const refused: Refusal[] = [];
  endpoint.onRefused((r) => refused.push(r));
  const { port } = await endpoint.listen();
  return { endpoint, port, refused };
}

describe('AllowList', () => {
  it('matches addresses and CIDR blocks, IPv4 through an IPv6 listener too', () => {
    const list = new AllowList(['10.1.2.3', '192.168.7.0/24', 'fd00::/64']);
    expect(['10.1.2.3', '::ffff:10.1.2.3', '192.168.7.200', 'fd00::42'].map((a) => list.allows(a))).toEqual([true, true, true, true]);
    expect(['10.1.2.4', '192.168.8.1', 'fd01::1', '', undefined].map((a) => list.allows(a))).toEqual([false, false, false, false, false]);
    expect(['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/128'].every(isAddressOrBlock)).toBe(true);
    expect(['analyzer.lab', '10.0.0.0/33', '10.0.0.1/8/2', '::/129', '10.0.0.0/x'].some(isAddressOrBlock)).toBe(false);
  });
});

describe('TcpServerEndpoint on a lab network', () => {
  it('refuses a source address that is not on the allow-list and accepts one that is', async () => {
    const { endpoint, port, refused } = await listening({ allow: new AllowList(['127.0.0.2']) });
    const opened = endpoint.open();
    const stranger = await dial(port, '127.0.0.1');
    await until(() => stranger.closed());
    expect(refused).toEqual([{ peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/), reason: 'not-allowed' }]);
    const analyzer = await dial(port, '127.0.0.2');
    const transport = await opened;
    const received: string[] = [];
    transport.onData((d) => received.push(d.toString()));
    analyzer.socket.write('hello');
    await until(() => received.join('') === 'hello');
  });

  it('closes a session that stays silent for the idle timeout, saying why', async () => {
    const { endpoint, port } = await listening({ idleMs: 200 });
    const opened = endpoint.open();
    const analyzer = await dial(port);
    const transport = await opened;
    let closed: CloseInfo | undefined;
    transport.onClose((info) => (closed = info));
    await until(() => analyzer.closed(), 3_000);
    expect(closed?.reason).toMatch(/^no traffic for 0 s; closed by labgate$/);
  });

  it('lets a waiting connection replace a session once it is silent, never one that is talking; a third is refused', async () => {
    const clock = new ManualClock();
    const { endpoint, port, refused } = await listening({ replaceSilentMs: 30_000, clock });
    const first = endpoint.open();
    const old = await dial(port);
    const session = await first;
    const seen: string[] = [];
    // As a driver would: what it reads here is protocol traffic (test/runtime/talking.test.ts: bytes alone are not).
    session.onData((d) => (seen.push(d.toString()), session.talking?.()));
    let closed: CloseInfo | undefined;
    session.onClose((info) => (closed = info));
    clock.advance(20_000);
    const newer = await dial(port);
    newer.socket.write('results');
    const third = await dial(port);
    await until(() => third.closed());
    expect(refused.map((r) => r.reason)).toEqual(['busy']);
    // The session talks at 25 s: it is not silent for 30 s until 55 s.
    clock.advance(5_000);
    old.socket.write('still here');
    await until(() => seen.join('') === 'still here');
    clock.advance(29_000);
    await settle();
    expect(old.closed() || newer.closed()).toBe(false);
    clock.advance(1_000);
    await until(() => old.closed());
    expect(closed?.reason).toMatch(/^replaced by a newer connection from 127\.0\.0\.1:\d+ after 30 s of silence$/);
    const next = await endpoint.open();
    const received: string[] = [];
    next.onData((d) => received.push(d.toString()));
    await until(() => received.join('') === 'results');
    expect(newer.closed()).toBe(false);
  });

  it('hands a connection made while the previous one is still closing to the next session (one connection per message)', async () => {
    const { endpoint, port, refused } = await listening();
    const first = endpoint.open();
    const a = await dial(port);
    await first;
    a.socket.destroy();
    const b = await dial(port);
    b.socket.write('next message');
    const next = await endpoint.open();
    const received: string[] = [];
    next.onData((d) => received.push(d.toString()));
    await until(() => received.join('') === 'next message');
    expect(refused).toEqual([]);
  });
});

describe('PortSupervisor over a listening endpoint', () => {
  it('takes the next connection at once however short the sessions are: no backoff for a listener', async () => {
    const clock = new ManualClock();
    const { endpoint, port } = await listening();
    const sessions: Transport[] = [];
    const supervisor = new PortSupervisor({
      instrument: 'bs240',
      endpoint: endpoint.description,
      open: (signal) => endpoint.open(signal),
      attach: (t) => (sessions.push(t), { stop: async () => {} }),
      clock,
      log: quiet,
      listening: true,
    });
    cleanups.push(() => supervisor.stop());
    supervisor.start();
    // An analyzer that connects once per message, and anyone's quick connect/close cycles: the clock never moves.
    for (let i = 1; i <= 20; i++) {
      const client = await dial(port);
      await until(() => sessions.length === i);
      client.socket.destroy();
      await until(() => supervisor.snapshot().state === 'waiting-for-device');
      await settle();
    }
    const analyzer = await dial(port);
    await until(() => sessions.length === 21);
    expect(supervisor.snapshot()).toMatchObject({ state: 'connected', failedOpens: 0 });
    expect(clock.pending).toBe(0);
    analyzer.socket.destroy();
  });

  it('still backs off when the port itself cannot be opened', async () => {
    const clock = new ManualClock();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => taken.close(() => r())));
    const endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: (taken.address() as AddressInfo).port });
    const supervisor = new PortSupervisor({
      instrument: 'bs240',
      endpoint: endpoint.description,
      open: (signal) => endpoint.open(signal),
      attach: () => ({ stop: async () => {} }),
      clock,
      log: quiet,
      listening: true,
    });
    cleanups.push(() => supervisor.stop());
    supervisor.start();
    await until(() => supervisor.snapshot().failedOpens === 1);
    expect(supervisor.snapshot()).toMatchObject({ state: 'error', reason: expect.stringMatching(/EADDRINUSE/) });
    expect(clock.pending).toBe(1);
  });
});

describe('refused connections on a configured instrument', () => {
  it('are counted on /metrics and the supervisor status, and logged once per interval under a flood', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const parsed = validateConfig({
      gateway: { id: 'gw1' },
      instruments: [{ id: 'bs240', driver: 'hl7', timezone: 'UTC', transport: { kind: 'tcp-server', host: '127.0.0.1', port, allow: ['127.0.0.2'] } }],
    });
    if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
    const config: Config = parsed.config;
    await loadDrivers(config.instruments);
    const bound = bindInstruments(config);
    if (bound.kind !== 'ok') throw new Error('unbound');
    const lines: { msg: string; repeated?: number }[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) } });
    const metrics = new Metrics({ now: () => Date.now() });
    const [handle] = superviseInstruments(config, {
      bound: () => bound.instruments,
      ingest: () => ({ kind: 'unavailable', reason: 'test' }),
      accepting: () => true,
      clock: systemClock,
      random: () => 0.5,
      log,
      metrics,
    });
    cleanups.push(async () => {
      await handle!.supervisor.stop();
      await handle!.endpoint.close();
      handle!.log.flush();
    });
    handle!.supervisor.start();
    const refused = (): number => handle!.supervisor.snapshot().refusedConnections ?? 0;
    // The supervisor starts listening asynchronously: dial until the first refusal is counted.
    while (refused() === 0) await dial(port).then((c) => until(() => c.closed()));
    for (let i = 1; i < 50; i++) await dial(port).then((c) => until(() => c.closed()));
    await until(() => refused() === 50);
    expect((await metrics.render()).body).toMatch(/^labgate_refused_connections_total\{instrument="bs240",reason="not-allowed"\} 50$/m);
    expect(lines.filter((l) => l.msg.startsWith('connection refused'))).toHaveLength(1);
    handle!.log.flush();
    expect(lines.filter((l) => l.msg.startsWith('connection refused')).at(-1)).toMatchObject({ repeated: 49 });
  });
});
