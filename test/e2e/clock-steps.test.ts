// The real `labgate run` under a wall clock that steps (libfaketime, its offset read from a file the test rewrites;
// the monotonic clock left alone, as NTP leaves it): it boots unsynchronised, ingests and drains, goes through a LIMS
// outage while the clock steps back two hours, synchronises, has a record waiting for a Retry-After while the clock
// steps forward a year, restarts and runs retention a year later. Nothing waits hours or goes early, nothing is
// pruned, every result reaches the LIMS exactly once, a replay after the steps is still a replay, and the page,
// /healthz and /metrics say what the clock is doing.
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { Hl7TcpSender } from './analyzers.js';
import { freePort, GatewayChild, scratch, sleep, startLims, until, writeConfig, type LimsChild } from './harness.js';
import { mindrayBs } from '../hl7/fixtures.js';

const HOUR = 3_600_000;
const YEAR = 365 * 24 * HOUR;
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Debian's libfaketime (package faketime); the test fails without it. */
function libfaketime(): string {
  const lib = readdirSync('/usr/lib', { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join('/usr/lib', d.name, 'faketime/libfaketime.so.1'))
    .find((p) => existsSync(p));
  if (!lib) throw new Error('libfaketime is required for the clock tests (apt-get install faketime)');
  return lib;
}

const message = (accession: string): string => mindrayBs.payload.replace('2410290017', accession);

describe('labgate run under a wall clock that steps', () => {
  it('keeps every wait its length, prunes nothing early, delivers every result once and says what the clock does', { timeout: 180_000 }, async () => {
    const { dir, cleanup } = scratch('clock');
    cleanups.push(cleanup);
    const faketime = join(dir, 'faketime');
    const timesync = join(dir, 'timesync');
    mkdirSync(timesync);
    writeFileSync(faketime, '+0\n');
    const lims = await startLims();
    cleanups.push(() => lims.stop());
    const hl7Port = await freePort();
    const httpPort = await freePort();
    const instrument = {
      id: 'bs240',
      driver: 'hl7',
      timezone: 'Europe/Vienna',
      transport: { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port },
      mapping: mindrayBs.profile.mapping,
      options: mindrayBs.options,
    };
    const gateway = new GatewayChild(writeConfig({ dir, httpPort, instruments: [instrument], lims }), httpPort, dir);
    cleanups.push(() => gateway.stopIfRunning());
    const env = {
      LD_PRELOAD: libfaketime(),
      FAKETIME_TIMESTAMP_FILE: faketime,
      FAKETIME_CACHE_DURATION: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      LABGATE_FAULT_TIMESYNC_DIR: timesync,
    };
    const get = async (path: string): Promise<string> => (await fetch(`http://127.0.0.1:${httpPort}${path}`)).text();
    const gatewayNow = async (): Promise<number> => (JSON.parse(await get('/status.json')) as { now: number }).now;
    const stepTo = async (offset: string, ms: number): Promise<void> => {
      writeFileSync(faketime, `${offset}\n`);
      await until(async () => Math.abs((await gatewayNow()) - Date.now() - ms) < 60_000, 10_000, `the gateway's clock at ${offset}`);
    };
    const faults = (f: object): Promise<Response> => fetch(`${lims.url}/_admin/faults`, { method: 'POST', body: JSON.stringify(f) });
    const sender = new Hl7TcpSender(hl7Port);
    cleanups.push(() => sender.close());

    // Booted before NTP answered: it says so, and marks what it receives.
    await gateway.start(env);
    await sender.connect();
    expect(await sender.send(message('C1'))).toBe('AA');
    await gateway.drained();
    const health = (await gateway.health()).body;
    expect(health.status).toBe('degraded');
    expect(health.reasons.some((r) => r.startsWith('clock not synchronised'))).toBe(true);
    expect(await get('/metrics')).toMatch(/^labgate_clock_synchronised 0$/m);

    // A LIMS outage, results arriving on both sides of a step back of two hours: all delivered once it is back.
    await faults({ rate503: 1, retryAfterSeconds: 1 });
    expect(await sender.send(message('C2'))).toBe('AA');
    await until(async () => (await gateway.health()).body.sinks.some((s) => s.circuit === 'open'), 10_000, 'the LIMS paused');
    await stepTo('-2h', -2 * HOUR);
    expect(await sender.send(message('C3'))).toBe('AA');
    await faults({ rate503: 0 });
    await gateway.drained(15_000);
    const page = JSON.parse(await get('/status.json')) as { now: number; instruments: { lastMessageAt: number }[] };
    expect(page.now - page.instruments[0]!.lastMessageAt).toBeGreaterThanOrEqual(0);
    expect(page.now - page.instruments[0]!.lastMessageAt).toBeLessThan(60_000);

    // NTP answers.
    writeFileSync(join(timesync, 'synchronized'), '');
    await until(async () => /^labgate_clock_synchronised 1$/m.test(await get('/metrics')), 15_000, 'labgate_clock_synchronised 1');
    expect((await gateway.health()).body.reasons.filter((r) => r.startsWith('clock'))).toEqual([]);

    // A record waiting 10 s for the LIMS's Retry-After while the clock steps forward a year: a newer result goes at
    // once, the waiting one only when its 10 s are up.
    await faults({ rate429: 1, retryAfterSeconds: 10 });
    const waitingSince = Date.now();
    expect(await sender.send(message('C4'))).toBe('AA');
    await sleep(1_000);
    await faults({ rate429: 0 });
    await stepTo('+365d', YEAR);
    expect(await sender.send(message('C5'))).toBe('AA');
    await until(async () => (await lims.stats()).records === 12, 10_000, "C5's results at the LIMS");
    if (Date.now() - waitingSince < 9_000) expect((await lims.stats()).records).toBe(12);
    await gateway.drained(30_000);
    expect(Date.now() - waitingSince).toBeGreaterThanOrEqual(9_000);
    expect(readFileSync(gateway.log, 'utf8')).toMatch(/the wall clock stepped back 2h 0m/);

    // Restarted a year on; retention runs: nothing it holds is old yet. A replay of the first message is a replay.
    sender.close();
    await gateway.kill('SIGTERM');
    await gateway.start({ ...env, LABGATE_FAULT_RETENTION_FIRST_RUN_MS: '500' });
    await until(() => /retention run finished/.test(readFileSync(gateway.log, 'utf8')), 10_000, 'a retention run');
    await sender.connect();
    expect(await sender.send(message('C1'))).toBe('AA');
    await gateway.drained();
    expect(await lims.stats()).toMatchObject({ records: 15, applied: 15 });
    await gateway.kill('SIGTERM');
    const store = new Database(join(dir, 'data', 'labgate.db'), { readonly: true });
    try {
      expect(store.prepare('SELECT count(*) FROM results').pluck().get()).toBe(15);
      expect(store.prepare('SELECT sum(load_count) FROM results').pluck().get()).toBe(18);
      // The audit log kept its days too: every result's entry is there.
      expect(store.prepare(`SELECT count(*) FROM audit WHERE action = 'inserted'`).pluck().get()).toBe(15);
      const unreliable = await capturedAtUnreliable(lims, store.prepare(`SELECT record_id FROM results WHERE accession = 'C1'`).pluck().get() as string);
      expect(unreliable).toBe(true);
    } finally {
      store.close();
    }
  });
});

async function capturedAtUnreliable(lims: LimsChild, recordId: string): Promise<boolean | undefined> {
  const res = await fetch(`${lims.url}${lims.resourcePath}/${recordId}`, { headers: { authorization: `Bearer ${lims.token}` } });
  return ((await res.json()) as { provenance: { capturedAtUnreliable?: boolean } }).provenance.capturedAtUnreliable;
}
