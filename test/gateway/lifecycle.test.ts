// The composition root's lifecycle: parts start in list order and stop in exactly the reverse order, a part that
// fails to start leaves only the started ones to stop, and each instrument is a member that starts and stops alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { Lifecycle, type Part } from '../../src/gateway/lifecycle.js';
import { createLogger } from '../../src/logger.js';
import { silentLog } from '../../src/log.js';
import { Hl7TcpSender } from '../e2e/analyzers.js';
import { freePort } from '../e2e/harness.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { until } from '../fixtures/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function recording(trace: string[], name: string, failStart = false, failStop = false): Part {
  return {
    name,
    start: async () => {
      await Promise.resolve();
      if (failStart) throw new Error(`${name} cannot start`);
      trace.push(`start ${name}`);
    },
    stop: () => {
      trace.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} cannot stop`);
    },
  };
}

describe('Lifecycle', () => {
  it('starts in list order and stops in exactly the reverse order, once', async () => {
    const trace: string[] = [];
    const lifecycle = new Lifecycle(silentLog);
    await lifecycle.start(['a', 'b', 'c'].map((n) => recording(trace, n)));
    await lifecycle.stop();
    await lifecycle.stop();
    expect(trace).toEqual(['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('a part that fails to start leaves the started ones, and only those, to stop', async () => {
    const trace: string[] = [];
    const lifecycle = new Lifecycle(silentLog);
    await expect(lifecycle.start([recording(trace, 'a'), recording(trace, 'b', true), recording(trace, 'c')])).rejects.toThrow('b cannot start');
    await lifecycle.stop();
    expect(trace).toEqual(['start a', 'stop a']);
  });

  it('a part that fails to stop does not keep the others running', async () => {
    const trace: string[] = [];
    const lifecycle = new Lifecycle(silentLog);
    await lifecycle.start([recording(trace, 'a'), recording(trace, 'b', false, true), recording(trace, 'c')]);
    await lifecycle.stop();
    expect(trace.slice(3)).toEqual(['stop c', 'stop b', 'stop a']);
  });
});

describe('the gateway as parts', () => {
  it('starts store, delivery, retention, disk, http and instruments in that order; an instrument stops and starts alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-lifecycle-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [p1, p2] = [await freePort(), await freePort()];
    const hl7 = (id: string, port: number) => ({
      id,
      driver: 'hl7',
      timezone: 'Europe/Vienna',
      transport: { kind: 'tcp-server', host: '127.0.0.1', port },
      mapping: mindrayBs.profile.mapping,
      options: mindrayBs.options,
    });
    const parsed = validateConfig({
      gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 },
      instruments: [hl7('one', p1), hl7('two', p2)],
    });
    if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
    const lines: { msg: string; parts?: string[] }[] = [];
    const log = createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) } });
    const gateway = new Gateway(parsed.config, { clock: systemClock, random: Math.random, log });
    const { httpPort } = await gateway.start();
    cleanups.push(() => gateway.stop());
    expect(lines.find((l) => l.msg === 'gateway ready')?.parts).toEqual([
      'logs',
      'store',
      'clock',
      'delivery',
      'retention',
      'disk',
      'http',
      'instruments',
      'new-ports',
    ]);

    const send = async (port: number): Promise<string> => {
      const sender = new Hl7TcpSender(port);
      cleanups.push(() => sender.close());
      await sender.connect();
      const code = await sender.send(mindrayBs.payload);
      sender.close();
      return code;
    };
    const refused = (port: number): Promise<boolean> =>
      new Promise((resolve) => {
        const s = createConnection(port, '127.0.0.1');
        s.once('connect', () => (s.destroy(), resolve(false)));
        s.once('error', () => resolve(true));
      });
    expect(await send(p1)).toBe('AA');
    expect(await gateway.instrumentSet.remove('one')).toBe(true);
    expect(gateway.instruments.map((i) => i.id)).toEqual(['two']);
    expect(await refused(p1)).toBe(true);
    expect(await send(p2)).toBe('AA');
    gateway.instrumentSet.add(parsed.config.instruments[0]!);
    await until(() => gateway.instruments.every((i) => i.supervisor.snapshot().state !== 'stopped'), 5_000, 'the instrument started again');
    expect(await send(p1)).toBe('AA');
    // The instruments' one group commit, as /metrics reads it: three messages, each durable before its AA.
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const figure = (name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)?.[1]);
    expect(figure('labgate_store_committed_messages_total')).toBe(3);
    expect(figure('labgate_store_commits_total')).toBeGreaterThanOrEqual(1);
    expect(figure('labgate_store_wal_fsyncs_total')).toBeGreaterThanOrEqual(1);
    expect(figure('labgate_store_wal_fsyncs_total')).toBeLessThanOrEqual(figure('labgate_store_commits_total'));
    await gateway.stop();
    expect(gateway.instruments).toEqual([]);
  });
});
