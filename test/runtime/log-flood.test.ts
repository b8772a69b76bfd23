// Log amplification under a flood, through the instrument wiring the gateway uses (gateway/instruments.ts): a sender
// that makes the gateway NAK frame after frame costs one log line per interval, not one per NAK, while every NAK is
// still counted.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/clock.js';
import { type DriverEvent } from '../../src/runner-contract.js';
import { bindInstruments } from '../../src/driver-registry.js';
import { superviseInstruments } from '../../src/gateway/instruments.js';
import { createLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { until } from '../fixtures/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('an instrument flooding the gateway with bad frames', () => {
  it('is NAKed every time, counted every time, and logged once per interval', async () => {
    const port = await freePort();
    const parsed = validateConfig({
      gateway: { id: 'gw1' },
      instruments: [{ id: 'chem1', driver: 'astm', timezone: 'UTC', transport: { kind: 'tcp-server', host: '127.0.0.1', port } }],
    });
    if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
    const bound = bindInstruments(parsed.config);
    if (bound.kind !== 'ok') throw new Error('unbound');
    const lines: { msg: string; level: number }[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; level: number }) } });
    const events: DriverEvent[] = [];
    const [handle] = superviseInstruments(parsed.config, {
      bound: () => bound.instruments,
      ingest: () => ({ kind: 'unavailable', reason: 'test' }),
      accepting: () => true,
      clock: systemClock,
      random: () => 0.5,
      log,
      metrics: new Metrics({ now: () => Date.now() }),
      onEvent: (_i, e) => void events.push(e),
    });
    cleanups.push(async () => {
      await handle!.supervisor.stop();
      await handle!.endpoint.close();
      handle!.log.flush();
    });
    handle!.supervisor.start();
    let analyzer: Socket | undefined;
    await until(
      () => {
        if (!analyzer || analyzer.destroyed) {
          analyzer = createConnection(port, '127.0.0.1');
          analyzer.on('error', () => {});
        }
        return handle!.supervisor.snapshot().state === 'connected';
      },
      10_000,
      'the analyzer connected',
    );
    cleanups.push(() => void analyzer!.destroy());
    let received = '';
    analyzer!.on('data', (d: Buffer) => (received += d.toString('latin1')));
    analyzer!.write('\x05');
    await until(() => received.includes('\x06'));
    // A frame whose checksum is wrong, again and again: each is answered NAK (LIS01-A2 8.3.4).
    const naks = (): number => received.split('\x15').length - 1;
    for (let i = 0; i < 300; i++) {
      const before = naks();
      analyzer!.write('\x021H|\\^&|||bad\r\x0300\r\n');
      await until(() => naks() > before);
    }
    expect(events.filter((e) => e.kind === 'nak').length).toBeGreaterThanOrEqual(300);
    const warnings = lines.filter((l) => l.level >= 40);
    expect(warnings.length, warnings.map((l) => l.msg).join('\n')).toBeLessThanOrEqual(3);
  });
});
