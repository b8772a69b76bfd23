// The gateway's own figures on /metrics, from a real gateway: an instrument's last message is the store's (so it
// survives a restart, and a silent analyzer stays measurably silent), the disk guard's measurement and floor, the
// WAL's size, and each sink's circuit.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { walBytes } from '../../src/gateway/gateway-figures.js';
import { createLogger } from '../../src/logger.js';
import { Hl7TcpSender } from '../e2e/analyzers.js';
import { freePort } from '../e2e/harness.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { hl7Instrument } from './configs.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const quiet = createLogger({ level: 'fatal', destination: { write: () => {} } });
const GiB = 1024 ** 3;

async function started(config: Config, freeBytes: number): Promise<{ gateway: Gateway; scrape: () => Promise<string> }> {
  const statfs = (): Promise<{ bavail: number; bsize: number }> => Promise.resolve({ bavail: freeBytes / 4096, bsize: 4096 });
  const gateway = new Gateway(config, { clock: systemClock, random: Math.random, log: quiet, statfs });
  const { httpPort } = await gateway.start();
  cleanups.push(() => gateway.stop());
  return { gateway, scrape: async () => (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text() };
}

const value = (metrics: string, series: string): number | undefined => {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe("the gateway's figures on /metrics", () => {
  it("reads a WAL's size from the file beside the database, 0 when there is none", () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-wal-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(walBytes(join(dir, 'labgate.db'))).toBe(0);
    writeFileSync(join(dir, 'labgate.db-wal'), Buffer.alloc(4120));
    expect(walBytes(join(dir, 'labgate.db'))).toBe(4120);
  });

  it("keeps an instrument's last message across a restart, and reports the disk, the WAL and each sink's circuit", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-figures-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const parsed = validateConfig({
      gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 200 },
      instruments: [hl7Instrument(port)],
      // Nothing listens here: the sink pauses at its first failed connect.
      sinks: { lims: { baseUrl: 'http://127.0.0.1:9/api', auth: { kind: 'static', tokenFile: join(dir, 'token') } } },
    });
    if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));

    const first = await started(parsed.config, 10 * GiB);
    const before = await first.scrape();
    expect(value(before, 'labgate_instrument_last_message_timestamp_seconds{instrument="bs240"}')).toBeUndefined();
    const sender = new Hl7TcpSender(port);
    cleanups.push(() => sender.close());
    await sender.connect();
    const sentAt = Date.now() / 1000;
    expect(await sender.send(mindrayBs.payload)).toBe('AA');
    sender.close();

    const after = await first.scrape();
    const last = value(after, 'labgate_instrument_last_message_timestamp_seconds{instrument="bs240"}')!;
    expect(Math.abs(last - sentAt)).toBeLessThan(5);
    expect(value(after, 'labgate_disk_free_bytes')).toBe(10 * GiB);
    expect(value(after, 'labgate_disk_floor_bytes')).toBe(200 * 1024 * 1024);
    expect(value(after, 'labgate_disk_accepting')).toBe(1);
    // The message's transaction is in the WAL (its exact size moves with the drains' writes).
    expect(value(after, 'labgate_store_wal_bytes')).toBeGreaterThan(0);
    // One circuit state at a time (the unreachable LIMS may have paused it already, or be probing).
    const circuit = (state: string): number => value(after, `labgate_sink_circuit_state{sink="lims",state="${state}"}`)!;
    expect(circuit('closed') + circuit('open') + circuit('half-open')).toBe(1);
    await first.gateway.stop();

    // Restarted on a disk below its floor: the silent instrument's last message is still the one before the restart.
    const second = await started(parsed.config, 100 * 1024 * 1024);
    const restarted = await second.scrape();
    expect(value(restarted, 'labgate_instrument_last_message_timestamp_seconds{instrument="bs240"}')).toBeCloseTo(last, 0);
    expect(value(restarted, 'labgate_disk_accepting')).toBe(0);
    expect(value(restarted, 'labgate_disk_free_bytes')).toBe(100 * 1024 * 1024);
  });
});
