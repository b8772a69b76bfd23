// `labgate emulate` over a socat cable, as a child process: unanswered, it gives up each session with EOT and sends
// ENQ again after --every; answered, it sends its specimen in checked frames and says so.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hl7Options } from '../../drivers/hl7/options.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { systemClock } from '../../src/clock.js';
import { specimen } from '../../src/commands/emulate.js';
import { silentLog } from '../../src/log.js';
import { openStore } from '../../src/store/store.js';
import { Cable, scratch, until } from '../e2e/harness.js';
import { startOrdersLims } from '../fixtures/orders-lims.js';

const bin = join(import.meta.dirname, '../../bin/labgate.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('labgate emulate', () => {
  it('repeats ENQ while unanswered, then delivers its specimen to a host that ACKs', async () => {
    const s = scratch('emulate');
    cleanups.push(s.cleanup);
    const cable = new Cable(s.dir);
    await cable.plug();
    cleanups.push(() => cable.unplug());
    const host = await cable.openAnalyzer(9600); // the gateway's end, opened here as the host
    const device = cable.device;
    cleanups.push(() => host.close());
    const heard: number[] = [];
    let answering = false;
    host.onData((data) => {
      for (const b of data) heard.push(b);
      // The host ACKs ENQ and every frame once it answers at all.
      if (answering && (data.includes(0x05) || data.includes(0x0a))) void host.write(Buffer.from([0x06]));
    });
    const child = spawn(process.execPath, [bin, 'emulate', '--port', device, '--every', '0.2', '--reply-timeout', '0.3'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    cleanups.push(() => void child.kill('SIGKILL'));
    await until(() => heard.filter((b) => b === 0x05).length >= 2, 10_000, 'two unanswered ENQ');
    expect(heard.filter((b) => b === 0x04).length).toBeGreaterThanOrEqual(1);
    expect(out).toContain('no answer (timeout); trying again in 0.2 s');
    heard.length = 0;
    answering = true;
    expect(await exited).toBe(0);
    expect(out).toContain('specimen 1 of 1: delivered');
    const all = Buffer.from(heard).toString('latin1');
    const sent = all.startsWith('\u0004') ? all.slice(1) : all; // the last unanswered session's EOT
    expect(sent.startsWith('\u0005\u00021H|\\^&|||labgate-emulate')).toBe(true);
    expect(sent).toContain('R|3|^^^K|4.1|mmol/L||N||F');
    // ... L|1|N <CR><ETX> C1 C2 <CR><LF><EOT>
    expect([sent.slice(-8, -5), sent.slice(-5, -3), sent.slice(-3)]).toEqual(['N\r\u0003', expect.stringMatching(/^[0-9A-F]{2}$/), '\r\n\u0004']);
  });

  it('writes a specimen with four coded results timed in UTC', () => {
    expect(specimen(7, new Date(Date.UTC(2026, 11, 1, 9, 5, 3))).split('\r')).toEqual([
      'H|\\^&|||labgate-emulate^1|||||||P|1|20261201090503',
      'P|1',
      'O|1|EMU-0007||^^^CHEM|R|20261201090503',
      'R|1|^^^GLU|5.4|mmol/L||N||F||||20261201090503',
      'R|2|^^^NA|140|mmol/L||N||F||||20261201090503',
      'R|3|^^^K|4.1|mmol/L||N||F||||20261201090503',
      'R|4|^^^CREA|88|umol/L||N||F||||20261201090503',
      'L|1|N',
      '',
    ]);
  });

  it.each(['display-query', 'law'] as const)(
    '--hl7 %s: queries each specimen, runs exactly the tests it was sent and says what each query came to',
    { timeout: 30_000 },
    async (dialect) => {
      const s = scratch('emulate-hl7');
      cleanups.push(s.cleanup);
      const cable = new Cable(s.dir);
      await cable.plug();
      cleanups.push(() => cable.unplug());
      const lims = await startOrdersLims(
        [{ accession: 'EMU-0001', orders: [{ orderId: 'o1', loinc: '2345-7', orderedAt: '2026-07-01T08:00:00Z' }] }],
        {},
        5_000,
      );
      cleanups.push(() => lims.close());
      const store = openStore({ dataDir: join(s.dir, 'data'), sinks: [], now: Date.now });
      cleanups.push(() => store.close());
      // The host end of the cable: the real HL7 runner, two-way in the emulator's dialect.
      const host = await cable.openAnalyzer(9600);
      const runner = createHl7Runner(
        {
          profile: { id: 'hl7-1', gatewayId: 'gw-test', timezone: 'UTC', mapping: [{ code: 'GLU', loinc: '2345-7' }] },
          transport: host,
          ingest: (m) => ({ kind: 'committed', summary: store.ingest(m), rejections: m.rejections }),
          accepting: () => true,
          clock: systemClock,
          log: silentLog,
          onEvent: () => {},
          orders: { source: lims.client, ledger: store.orders },
        },
        hl7Options({ orders: { query: true, dialect, queryTimeoutMs: 3_000 } }),
      );
      runner.start();
      cleanups.push(async () => (await runner.stop(), await host.close()));
      const child = spawn(process.execPath, [bin, 'emulate', '--port', cable.device, '--hl7', dialect, '--specimens', '2', '--reply-timeout', '3'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      cleanups.push(() => void child.kill('SIGKILL'));
      expect(await new Promise<number | null>((r) => child.once('exit', r))).toBe(0);
      expect(out.trim().split('\n')).toEqual(['specimen EMU-0001: ordered GLU', 'specimen EMU-0001: results accepted (AA)', 'specimen EMU-0002: no orders']);
      expect(store.recentResults(10).map((r) => [r.accession, r.analyteLoinc])).toEqual([['EMU-0001', '2345-7']]);
      await until(() => store.orders.dispatches.counts().pending === 1, 2_000, 'the dispatch recorded');
    },
  );
});
