// `labgate run` with its data directory on a small real file system (a loop-mounted 96 MB ext4 image, small-disk.ts)
// that fills while an ASTM analyzer (socat cable) and an HL7 analyzer (TCP) send and both sinks are down: the
// gateway refuses (NAK, AR) before SQLite ever finds the disk full, nothing it acknowledged is lost, /healthz and the
// page say why, and once the operator deletes the file that filled the card it accepts again by itself, without a
// restart; when the sinks come back, everything acknowledged reaches PostgreSQL and the LIMS once. Then the same with
// the floor off, so that SQLite itself hits the full disk in the middle of group commits: each refused message is
// refused whole (none half-stored), the gateway keeps running, and it resumes once there is space.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { TcpProxy } from '../postgres/tcp-proxy.js';
import { astmCodes, astmInstrument, astmMessage, Hl7TcpSender } from './analyzers.js';
import { centralDatabase, expectDeliveredOnce } from './central.js';
import { cabledScratch, freePort, GatewayChild, scratch, startLims, until, writeConfig } from './harness.js';
import { mountSmallDisk, type SmallDisk } from './small-disk.js';
import { readStore, type StoreView } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MiB = 1024 * 1024;
const ASTM_RESULTS = 3;
const HL7_RESULTS = 3;

/** The Mindray message as a new one (its own control id and accession), 60 kB of it a Z segment no decoder reads. */
function hl7Message(accession: string, controlId: string): string {
  const payload = mindrayBs.payload.replace('|12|P|', `|${controlId}|P|`).replaceAll('2410290017', accession);
  return `${payload.replace(/\r?$/, '\r')}ZPD|${'x'.repeat(60_000)}\r`;
}

function hl7Instrument(id: string, port: number): object {
  return {
    id,
    driver: 'hl7',
    timezone: 'Europe/Vienna',
    transport: { kind: 'tcp-server', host: '127.0.0.1', port },
    mapping: mindrayBs.profile.mapping,
    options: mindrayBs.options,
  };
}

/** Points the configuration's data directory at the small disk; returns it. */
function onDisk(file: string, disk: SmallDisk, extra: object = {}): string {
  const dataDir = join(disk.path, 'data');
  const config = JSON.parse(readFileSync(file, 'utf8')) as { gateway: object };
  Object.assign(config.gateway, { dataDir }, extra);
  writeFileSync(file, JSON.stringify(config));
  return dataDir;
}

/** Every capture holds a whole message and every accession in `acked` its results, once. */
function expectWhole(view: StoreView, acked: Map<string, number>): void {
  expect(view.integrity).toBe('ok');
  const byAccession = new Map<string, number>();
  for (const r of view.results) byAccession.set(r.accession, (byAccession.get(r.accession) ?? 0) + 1);
  const byCapture = new Map<number, number>();
  for (const r of view.results) byCapture.set(r.captureId, (byCapture.get(r.captureId) ?? 0) + 1);
  expect(
    view.captures.filter((c) => c.status !== 'accepted' || byCapture.get(c.id) !== c.resultCount),
    'every capture accepted with all its results',
  ).toEqual([]);
  for (const [accession, results] of acked) expect(byAccession.get(accession), accession).toBe(results);
  expect(
    [...byAccession.keys()].filter((a) => !acked.has(a)),
    'nothing stored that was not acknowledged',
  ).toEqual([]);
}

describe('labgate run on a card that fills', () => {
  it('refuses before SQLite fails, loses nothing it acknowledged, says why, resumes by itself and delivers once', { timeout: 120_000 }, async () => {
    const { dir, cable } = await cabledScratch('card', cleanups);
    const disk = mountSmallDisk(dir, 96);
    cleanups.push(() => disk.unmount());
    const db = await centralDatabase();
    cleanups.push(() => db.close());
    const lims = await startLims();
    cleanups.push(() => lims.stop());
    // Both sinks behind proxies the test cuts: the network to them is down, their servers are not.
    const pgTarget = new URL(db.url);
    const pgProxy = await TcpProxy.start(pgTarget.hostname, Number(pgTarget.port || 5432));
    const limsProxy = await TcpProxy.start('127.0.0.1', Number(new URL(lims.url).port));
    cleanups.push(
      () => pgProxy.close(),
      () => limsProxy.close(),
    );
    pgProxy.cut();
    limsProxy.cut();
    const httpPort = await freePort();
    const hl7Port = await freePort();
    const file = writeConfig({
      dir,
      httpPort,
      instruments: [astmInstrument('chem1', cable.device, astmCodes), hl7Instrument('bs240', hl7Port)],
      pg: { ...db, url: pgProxy.url(db.url) },
      lims: { ...lims, url: `http://127.0.0.1:${limsProxy.port}` },
      diskFloorMb: 16,
    });
    const dataDir = onDisk(file, disk);
    const gateway = new GatewayChild(file, httpPort, dir);
    cleanups.push(() => gateway.stopIfRunning());
    await gateway.start();
    const pid = gateway.pid;
    const analyzer = await cable.openAnalyzer();
    cleanups.push(() => analyzer.close());
    const emulator = new AstmEmulator(analyzer, systemClock, { maxFrameBytes: 247, replyTimeoutMs: 2_000, maxRestarts: 0, busyRetryMs: 50 });
    const hl7 = new Hl7TcpSender(hl7Port);
    cleanups.push(() => hl7.close());
    await hl7.connect();
    await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')?.state === 'connected', 10_000, 'chem1');

    // The operator's file leaves the card 24 MB above the 16 MB floor, most of it for the WAL to grow into.
    const filler = disk.fill('operator-backup.tar', disk.free() - 40 * MiB);
    const acked = new Map<string, number>();
    const refusing = async (): Promise<boolean> => (await gateway.health()).status === 503;
    // Each analyzer sends until it is refused while the gateway says the disk is below its floor; a refusal while it
    // does not (the estimate reached the floor and free space was being measured again) is sent again, as an
    // analyzer does. The refused message stays with the analyzer.
    const hl7Sending = (async () => {
      for (let n = 1; n < 5_000; n++) {
        const code = await hl7.send(hl7Message(`H${n}`, `C${n}`));
        if (code === 'AA') acked.set(`H${n}`, HL7_RESULTS);
        else if (code !== 'AR') throw new Error(`HL7 answered ${code}`);
        else if (await refusing()) return `H${n}`;
        else n--;
      }
      throw new Error('the HL7 analyzer was never refused');
    })();
    const astmSending = (async () => {
      for (let i = 1; i < 5_000; i++) {
        const outcome = await emulator.send([astmMessage(`A${i}`, ASTM_RESULTS)]);
        if (outcome.kind === 'sent') acked.set(`A${i}`, ASTM_RESULTS);
        else if (await refusing()) return `A${i}`;
        else i--;
      }
      throw new Error('the ASTM analyzer was never refused');
    })();
    const [hl7Kept, astmKept] = await Promise.all([hl7Sending, astmSending]);

    // Refused before SQLite found the disk full: not one commit failed, and the floor held.
    const freeWhenRefusing = disk.free();
    const log = (): string => readFileSync(gateway.log, 'utf8');
    expect(log()).not.toMatch(/the disk is full|SQLITE_FULL|SQLITE_IOERR/);
    expect(freeWhenRefusing, `${(freeWhenRefusing / MiB).toFixed(1)} MB free`).toBeGreaterThanOrEqual(16 * MiB);
    // Nothing acknowledged lost, nothing of a refused message kept.
    expectWhole(readStore(dataDir), acked);
    // /healthz, the page and /status.json say why.
    const health = await gateway.health();
    expect(health.status).toBe(503);
    expect(health.body.reasons.find((r) => r.startsWith('disk:'))).toMatch(
      /^disk: \d+ MB free on .*card\/data( \(.*\))?, below the floor of 16 MB; not accepting results$/,
    );
    const page = await (await fetch(`http://127.0.0.1:${httpPort}/`)).text();
    expect(page).toMatch(/data-disk="refusing"><strong>Not accepting results: the disk is full\.<\/strong> \d+ MB free on [^<]*, below the floor of 16 MB/);
    const status = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as { disk?: { accepting: boolean } };
    expect(status.disk?.accepting).toBe(false);
    // Still refused a moment later: an analyzer trying again meanwhile keeps its message.
    expect(await hl7.send(hl7Message(hl7Kept, 'R1'))).toBe('AR');

    // The operator deletes the file: ingest resumes by itself, the same process, no restart.
    rmSync(filler);
    await until(async () => !(await refusing()), 15_000, 'the gateway accepting again');
    expect(gateway.pid).toBe(pid);
    expect(await hl7.send(hl7Message(hl7Kept, 'R2'))).toBe('AA');
    acked.set(hl7Kept, HL7_RESULTS);
    expect(await emulator.send([astmMessage(astmKept, ASTM_RESULTS)])).toMatchObject({ kind: 'sent' });
    acked.set(astmKept, ASTM_RESULTS);

    // The sinks come back: everything acknowledged reaches both, once.
    pgProxy.restore();
    limsProxy.restore();
    await gateway.drained(60_000);
    await gateway.kill('SIGTERM');
    const view = readStore(dataDir);
    expectWhole(view, acked);
    await expectDeliveredOnce(view, db, lims);
  });

  it('with the floor off, SQLite finds the disk full: every message it was committing refused whole, and it goes on', { timeout: 60_000 }, async () => {
    // The disk guard is off (diskFloorMb 0), so SQLite itself meets the full disk, in whichever group commit of the
    // two analyzers' messages reaches it: the transaction is rolled back whole and every message of it refused. Which
    // messages share a group depends on timing here; test/store/group-full.test.ts makes SQLITE_FULL strike at
    // one point after another of a group of sixteen, and test/gateway/group-commit.test.ts NAKs all sixteen analyzers.
    const { dir, cleanup } = scratch('card-full');
    cleanups.push(cleanup);
    const disk = mountSmallDisk(dir, 64);
    cleanups.push(() => disk.unmount());
    const httpPort = await freePort();
    const ports = [await freePort(), await freePort()];
    const file = writeConfig({ dir, httpPort, instruments: ports.map((port, k) => hl7Instrument(`bs${k}`, port)), diskFloorMb: 0 });
    const dataDir = onDisk(file, disk);
    const gateway = new GatewayChild(file, httpPort, dir);
    cleanups.push(() => gateway.stopIfRunning());
    await gateway.start();
    const pid = gateway.pid;
    const senders = ports.map((port) => new Hl7TcpSender(port));
    for (const sender of senders) {
      cleanups.push(() => sender.close());
      await sender.connect();
    }
    const filler = disk.fill('another-process.log', disk.free() - 8 * MiB);
    const acked = new Map<string, number>();
    // Each analyzer sends until it is refused; the refused message stays with it.
    const kept = await Promise.all(
      senders.map(async (sender, k) => {
        for (let n = 1; n < 5_000; n++) {
          const code = await sender.send(hl7Message(`F${k}-${n}`, `F${k}-${n}`));
          if (code === 'AR') return `F${k}-${n}`;
          expect(code).toBe('AA');
          acked.set(`F${k}-${n}`, HL7_RESULTS);
        }
        throw new Error(`bs${k} was never refused`);
      }),
    );
    // The log is written asynchronously: the AR can reach the analyzer before its line reaches the file.
    const refusedLine = /"reason":"the disk is full","msg":"commit failed; the analyzer keeps the message"/;
    await until(() => refusedLine.test(readFileSync(gateway.log, 'utf8')), 5_000, `the refusal for a full disk in ${gateway.log}`);
    expect(disk.free(), 'the card is full').toBeLessThan(MiB);
    // The same process still answers, and holds every acknowledged message whole and nothing of a refused one.
    expect([gateway.running, gateway.pid]).toEqual([true, pid]);
    expect((await gateway.health()).body.instruments.map((i) => i.state)).toEqual(['connected', 'connected']);
    expectWhole(readStore(dataDir), acked);

    // Space again: the analyzers send their refused messages again and they are stored, without a restart.
    rmSync(filler);
    for (const [k, sender] of senders.entries()) {
      expect(await sender.send(hl7Message(kept[k]!, `R${k}`))).toBe('AA');
      acked.set(kept[k]!, HL7_RESULTS);
    }
    expect(gateway.pid).toBe(pid);
    await gateway.kill('SIGTERM');
    expectWhole(readStore(dataDir), acked);
  });
});
