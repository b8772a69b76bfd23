// A gateway whose wall clock is not synchronised says so on /healthz, on /metrics (labgate_clock_synchronised 0), on
// the status page, and in the receive time of what arrives meanwhile (the key keeps the analyzer's own time); one
// whose clock is synchronised says labgate_clock_synchronised 1 and stamps nothing.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { clockSyncProbe } from '../../src/clock-sync.js';
import { validateConfig } from '../../src/config/load.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { createLogger } from '../../src/logger.js';
import type { ResultPayload } from '../../src/payload.js';
import { Hl7TcpSender } from '../e2e/analyzers.js';
import { freePort } from '../e2e/harness.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { hl7Instrument } from './configs.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const quiet = createLogger({ level: 'fatal', destination: { write: () => {} } });

async function gatewayWith(timesync: 'running' | 'synchronised') {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-clock-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const timesyncDir = join(dir, 'timesync');
  mkdirSync(timesyncDir);
  if (timesync === 'synchronised') writeFileSync(join(timesyncDir, 'synchronized'), '');
  const port = await freePort();
  const parsed = validateConfig({
    gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 },
    instruments: [hl7Instrument(port)],
    sinks: { lims: { baseUrl: 'http://127.0.0.1:9/api', auth: { kind: 'static', tokenFile: join(dir, 'token') } } },
  });
  if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
  const clockSync = clockSyncProbe({ timesyncDir, timedated: async () => undefined, monotonic: () => systemClock.monotonic() });
  const gateway = new Gateway(parsed.config, { clock: systemClock, random: Math.random, log: quiet, clockSync });
  const { httpPort } = await gateway.start();
  cleanups.push(() => gateway.stop());
  const get = async (path: string): Promise<string> => (await fetch(`http://127.0.0.1:${httpPort}${path}`)).text();
  const sender = new Hl7TcpSender(port);
  cleanups.push(() => sender.close());
  await sender.connect();
  expect(await sender.send(mindrayBs.payload)).toBe('AA');
  const payloads = (gateway.store!.db.prepare('SELECT payload FROM results').pluck().all() as string[]).map((p) => JSON.parse(p) as ResultPayload);
  return { get, payloads };
}

describe('the clock as a gateway reports it', () => {
  it('not synchronised: /healthz degraded with the reason, the gauge 0, the page banner, receive times marked', async () => {
    const { get, payloads } = await gatewayWith('running');
    const health = JSON.parse(await get('/healthz')) as { status: string; reasons: string[]; clock: { state: string } };
    expect(health.status).toBe('degraded');
    expect(health.reasons).toContain('clock not synchronised (systemd-timesyncd (no synchronisation since boot)): receive times stamped now may be wrong');
    expect(health.clock.state).toBe('unsynchronised');
    expect(await get('/metrics')).toMatch(/^labgate_clock_synchronised 0$/m);
    expect(await get('/')).toContain('Clock not synchronised');
    expect(payloads.length).toBeGreaterThan(0);
    for (const p of payloads) expect(p.capture.clock).toBe('unsynchronised');
  });

  it('synchronised: the gauge 1, no reason, nothing marked', async () => {
    const { get, payloads } = await gatewayWith('synchronised');
    const health = JSON.parse(await get('/healthz')) as { reasons: string[]; clock: { state: string; source: string } };
    expect(health.reasons.filter((r) => r.startsWith('clock'))).toEqual([]);
    expect(health.clock).toEqual({ state: 'synchronised', source: 'systemd-timesyncd' });
    expect(await get('/metrics')).toMatch(/^labgate_clock_synchronised 1$/m);
    expect(payloads.length).toBeGreaterThan(0);
    for (const p of payloads) expect(p.capture.clock).toBeUndefined();
  });
});
