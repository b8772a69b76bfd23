// `labgate run` as the service process, attacked over its HTTP listener with raw sockets: request targets that no
// URL parser accepts answer 400 for that request alone, and an unhandled promise rejection anywhere in the
// process is logged and counted while the instruments keep being answered.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Hl7TcpSender } from './analyzers.js';
import { until } from './harness.js';
import { hl7Message as message, hl7Rig, rawRequest } from './hostile.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const rig = (name: string, env: Record<string, string> = {}, http: object = {}) => hl7Rig(cleanups, name, { env, http });

describe('labgate run under hostile HTTP requests', () => {
  it('answers 400 to request targets no URL parser accepts and keeps serving everything else', async () => {
    const { gateway, sender, httpPort } = await rig('bad-url');
    expect(await sender.send(message(1))).toBe('AA');
    for (const target of ['//[', '//:99999', '//%', 'http://[/']) {
      const reply = await rawRequest(httpPort, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(reply, target).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(gateway.running).toBe(true);
    expect((await gateway.health()).status).toBe(200);
    expect(await sender.send(message(2))).toBe('AA');
  });

  it('logs and counts an unhandled rejection, shows it on /healthz, and keeps acknowledging messages', async () => {
    const { gateway, sender, httpPort } = await rig('unhandled', { LABGATE_FAULT_UNHANDLED_REJECTION_MS: '300' });
    await until(() => readFileSync(gateway.log, 'utf8').includes('unhandled promise rejection'), 10_000, 'the rejection logged');
    expect(gateway.running).toBe(true);
    expect(await sender.send(message(3))).toBe('AA');
    const health = await gateway.health();
    expect(health.body.status).toBe('degraded');
    expect(health.body.reasons.join('\n')).toMatch(/1 unhandled error since start/);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^labgate_unhandled_errors_total 1$/m);
    const line = readFileSync(gateway.log, 'utf8')
      .split('\n')
      .find((l) => l.includes('unhandled promise rejection'))!;
    expect(JSON.parse(line)).toMatchObject({ level: 50, err: { message: 'labgate fault: an unhandled rejection' } });
  });

  it('keeps /healthz and the instruments answering while idle connections flood the HTTP port', async () => {
    const { gateway, sender, httpPort, hl7Port } = await rig('idle-flood', {}, { maxConnections: 64 });
    // The unit's LimitNOFILE, scaled down: the flood below is more than every descriptor the gateway may open.
    execFileSync('prlimit', [`--pid=${gateway.pid}`, '--nofile=200:200']);
    const flood: Socket[] = [];
    cleanups.push(() => flood.forEach((s) => s.destroy()));
    for (let i = 0; i < 400; i++) {
      const socket = createConnection(httpPort, '127.0.0.1');
      socket.on('error', () => {});
      flood.push(socket);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()).once('close', () => resolve()));
    }
    // A raw socket, as a watchdog's probe would be: no client-side retry hides a reset connection.
    expect(await rawRequest(httpPort, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    expect(await sender.send(message(4))).toBe('AA');
    // A new instrument connection needs a descriptor too: the HTTP flood has not taken them all.
    sender.close();
    await until(async () => (await gateway.health()).body.instruments[0]?.state !== 'connected', 5_000, 'the session to end');
    const again = new Hl7TcpSender(hl7Port);
    cleanups.push(() => again.close());
    await again.connect();
    expect(await again.send(message(5))).toBe('AA');
    expect(gateway.running).toBe(true);
    expect(readFileSync(gateway.log, 'utf8')).toMatch(/http connection limit reached/);
  });
});
