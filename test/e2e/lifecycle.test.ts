// `labgate run` as the service process, over a socat pseudo-terminal: SIGTERM stops it cleanly and quickly while
// an analyzer is sending (and during start-up), and a full disk makes it refuse (ASTM NAK, HL7 AR, /healthz
// failing) instead of crashing, then accept again by itself. No sinks here: these are about the gateway's own
// process and store.
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator, type EmulatorOutcome } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { astmCodes, astmInstrument, astmMessage, Hl7TcpSender } from './analyzers.js';
import { cabledScratch, freePort, GatewayChild, scratch, until, writeConfig } from './harness.js';
import { readStore, type StoreView } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PER = 3;

/** Each accession's results are all there, once, and every capture holds a whole message. */
function expectWhole(view: StoreView, accessions: readonly string[]): void {
  expect(view.integrity).toBe('ok');
  expect(
    view.captures.filter((c) => c.status !== 'accepted' || c.resultCount !== PER),
    'every capture is a whole message',
  ).toEqual([]);
  const byAccession = new Map<string, number>();
  for (const r of view.results) byAccession.set(r.accession, (byAccession.get(r.accession) ?? 0) + 1);
  for (const accession of accessions) expect(byAccession.get(accession), accession).toBe(PER);
  expect(
    [...byAccession.values()].every((n) => n === PER),
    'no message stored partially',
  ).toBe(true);
}

/** A cable, a gateway child on its device end, and the analyzer's emulator on the other end. */
async function rig(name: string, options: { diskFloorMb?: number; hl7Port?: number; env?: (dir: string) => Record<string, string> } = {}) {
  const s = await cabledScratch(name, cleanups);
  const cable = s.cable;
  const httpPort = await freePort();
  const instruments = [astmInstrument('chem1', cable.device, astmCodes)];
  if (options.hl7Port) {
    instruments.push({
      id: 'bs240',
      driver: 'hl7',
      timezone: 'Europe/Vienna',
      transport: { kind: 'tcp-server', host: '127.0.0.1', port: options.hl7Port },
      mapping: mindrayBs.profile.mapping,
      options: mindrayBs.options,
    });
  }
  const config = writeConfig({ dir: s.dir, httpPort, instruments, ...(options.diskFloorMb ? { diskFloorMb: options.diskFloorMb } : {}) });
  const gateway = new GatewayChild(config, httpPort, s.dir);
  cleanups.push(() => gateway.stopIfRunning());
  await gateway.start(options.env?.(s.dir));
  const analyzer = await cable.openAnalyzer();
  cleanups.push(() => analyzer.close());
  await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')?.state === 'connected', 10_000, 'chem1 connected');
  // Short timeouts: a NAKed ENQ is retried after 50 ms, a silent gateway costs 1 s.
  const emulator = new AstmEmulator(analyzer, systemClock, { maxFrameBytes: 64, replyTimeoutMs: 1_000, maxRestarts: 0, busyRetryMs: 50 });
  const received: number[] = [];
  analyzer.onData((data) => received.push(...data));
  return { dir: s.dir, gateway, emulator, received };
}

/** True when a TCP connection to 127.0.0.1:port succeeds. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('labgate run: stopping and refusing', () => {
  it('SIGTERM while the analyzer is sending exits 0 within 5 s and keeps every ACKed message whole', { timeout: 60_000 }, async () => {
    const { gateway, emulator } = await rig('sigterm');
    const acked: string[] = [];
    let outcome: EmulatorOutcome | undefined;
    const sending = (async () => {
      for (let i = 0; ; i++) {
        outcome = await emulator.send([astmMessage(`TERM-${i}`, PER)]).catch((err: Error) => ({ kind: 'aborted' as const, reason: err.message, restarts: 0 }));
        if (outcome.kind !== 'sent') return;
        acked.push(`TERM-${i}`);
      }
    })();
    await until(() => acked.length >= 5, 20_000, 'five messages ACKed');

    const exit = await gateway.kill('SIGTERM');
    await sending;

    expect(exit, 'a clean exit, not death by signal').toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
    // The analyzer was in the middle of a message, or of its next ENQ, when the gateway went away.
    expect(outcome?.kind).toBe('aborted');
    expectWhole(readStore(gateway.dataDir), acked);
  });

  it('SIGTERM during start-up (as soon as the HTTP port accepts) takes the clean path too: exit 0', { timeout: 30_000 }, async () => {
    const s = scratch('sigterm-start');
    cleanups.push(s.cleanup);
    const httpPort = await freePort();
    const gateway = new GatewayChild(
      writeConfig({ dir: s.dir, httpPort, instruments: [astmInstrument('chem1', `${s.dir}/absent`, astmCodes)] }),
      httpPort,
      s.dir,
    );
    cleanups.push(() => gateway.stopIfRunning());
    gateway.spawn();
    // The HTTP port accepting a connection means the gateway is in the middle of start(): the store is open, the
    // instruments are not started yet or just were.
    await until(() => accepts(httpPort), 15_000, 'the HTTP port to accept connections');
    const exit = await gateway.kill('SIGTERM');
    expect(exit, 'a clean exit, not death by signal').toMatchObject({ code: 0, signal: null });
    expect(readFileSync(gateway.log, 'utf8')).toContain('gateway stopped');
  });

  it('a full disk makes it refuse (ENQ NAK, HL7 AR, /healthz failing) without crashing, and it recovers by itself', { timeout: 60_000 }, async () => {
    const hl7Port = await freePort();
    let freeBytesFile = '';
    const { gateway, emulator, received } = await rig('disk', {
      diskFloorMb: 64,
      hl7Port,
      env: (dir) => {
        freeBytesFile = join(dir, 'free-bytes');
        writeFileSync(freeBytesFile, String(100 * 1024 ** 3));
        return { LABGATE_FAULT_STATFS_FILE: freeBytesFile, LABGATE_FAULT_DISK_INTERVAL_MS: '100' };
      },
    });
    const pid = gateway.pid;
    const hl7 = new Hl7TcpSender(hl7Port);
    await hl7.connect();
    cleanups.push(() => hl7.close());
    const hl7Message = (accession: string, controlId: number): string =>
      mindrayBs.payload.replace('|12|P|', `|${controlId}|P|`).replaceAll('2410290017', accession);

    expect(await emulator.send([astmMessage('DISK-0', PER)])).toMatchObject({ kind: 'sent' });
    expect(await hl7.send(hl7Message('H-DISK-0', 1))).toBe('AA');

    // The disk fills up: 1 MB free, below the 64 MB floor.
    writeFileSync(freeBytesFile, String(1024 ** 2));
    await until(async () => (await gateway.health()).status === 503, 5_000, '/healthz failing');
    const failing = await gateway.health();
    expect(failing.body.status).toBe('failing');
    expect(failing.body.reasons.some((r) => r.startsWith('disk:') && r.includes('not accepting'))).toBe(true);

    received.length = 0;
    const refused = await emulator.send([astmMessage('DISK-1', PER)]);
    expect(refused).toMatchObject({ kind: 'aborted', reason: 'busy' });
    expect(received.length, 'every ENQ was answered').toBeGreaterThanOrEqual(6);
    expect(
      received.every((b) => b === 0x15),
      'with NAK, never ACK',
    ).toBe(true);
    expect(await hl7.send(hl7Message('H-DISK-1', 2))).toBe('AR');
    const during = readStore(gateway.dataDir);
    expect(
      during.results.filter((r) => r.accession.endsWith('DISK-1')),
      'nothing of a refused message is stored',
    ).toEqual([]);
    expect(gateway.running && gateway.pid === pid, 'the gateway is still the same running process').toBe(true);

    // Space is back: it accepts again by itself, without a restart.
    writeFileSync(freeBytesFile, String(100 * 1024 ** 3));
    await until(async () => (await gateway.health()).status === 200, 5_000, '/healthz no longer failing');
    expect(await emulator.send([astmMessage('DISK-1', PER)])).toMatchObject({ kind: 'sent' });
    expect(await hl7.send(hl7Message('H-DISK-1', 3))).toBe('AA');
    expect(gateway.pid).toBe(pid);

    const exit = await gateway.kill('SIGTERM');
    expect(exit).toMatchObject({ code: 0, signal: null });
    const view = readStore(gateway.dataDir);
    expect(view.integrity).toBe('ok');
    const count = (accession: string): number => view.results.filter((r) => r.accession === accession).length;
    expect([count('DISK-0'), count('DISK-1'), count('H-DISK-0'), count('H-DISK-1')]).toEqual([PER, PER, 3, 3]);
    expect(view.captures.every((c) => c.status === 'accepted')).toBe(true);
  });
});
