// `systemctl reload labgate` on the real `labgate run` child: while one analyzer streams over a socat pseudo-terminal
// and both sinks (PostgreSQL and the LIMS test server) deliver, SIGHUPs add an instrument on a second cable (its
// first result reaches both sinks), restart it alone with a new setting, give the streaming instrument a new mapping
// (its next message uses it, and Reprocess delivers the message the old mapping rejected), remove the added one, and
// an invalid file changes nothing; at last the streaming one is removed in the middle of its stream. The streaming link never drops, the sinks never pause, and every result the
// analyzer was ACKed for is in both sinks exactly once.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator, type EmulatorOutcome } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import type { HealthReport, LastReload } from '../../src/web/health.js';
import { call, csrfOf, post, sessionCookie } from '../web/harness.js';
import { astmInstrument, astmMessage } from './analyzers.js';
import { centralDatabase, expectDeliveredOnce } from './central.js';
import { Cable, cabledScratch, freePort, GatewayChild, sleep, startLims, until, writeConfig, type GatewaySetup } from './harness.js';
import { readStore } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Results per streamed message (GLU, NA, K). */
const PER = 3;
const MAPPED = ['GLU', 'NA', 'K'];

/** A message whose one result is CRP, a code chem1's first mapping lacks. */
function crpMessage(accession: string): string {
  return ['H|\\^&|||Emu^1|||||||P|1|20260701120000', 'P|1', `O|1|${accession}`, 'R|1|^^^CRP|7.5|mmol/L||N||F||||20260701123000', 'L|1|N'].join('\r') + '\r';
}

async function analyzerOn(cable: Cable): Promise<AstmEmulator> {
  const port = await cable.openAnalyzer();
  cleanups.push(() => port.close());
  return new AstmEmulator(port, systemClock, { maxFrameBytes: 64, replyTimeoutMs: 2_000, maxRestarts: 0, busyRetryMs: 50 });
}

/** Sends SIGHUP and waits until /healthz names a reload other than `before`. */
async function reload(gateway: GatewayChild, before: LastReload | undefined): Promise<LastReload> {
  gateway.signal('SIGHUP');
  let after: LastReload | undefined;
  await until(
    async () => {
      after = (await gateway.health()).body.lastReload;
      return after !== undefined && JSON.stringify(after) !== JSON.stringify(before);
    },
    10_000,
    'the reload to be reported on /healthz',
  );
  return after!;
}

/** What /healthz said while the test ran: every sink circuit that was not closed, every chem1 status that was not its first connected one. */
function watch(gateway: GatewayChild): { stop(): Promise<{ paused: string[]; drops: string[] }> } {
  const paused: string[] = [];
  const drops: string[] = [];
  let first: HealthReport['instruments'][number] | undefined;
  let running = true;
  const loop = (async () => {
    while (running) {
      const reply = await gateway.health().catch((err: Error) => err);
      if (reply instanceof Error) {
        if (running) drops.push(`/healthz: ${reply.message}`);
        return;
      }
      const { body } = reply;
      for (const s of body.sinks) if (s.circuit !== 'closed') paused.push(`${s.sink}: ${s.circuit} ${s.reason ?? ''}`);
      const chem1 = body.instruments.find((i) => i.instrument === 'chem1');
      first ??= chem1;
      // since is read off the monotonic clock each time (a millisecond either way); a drop would also count a reconnect.
      if (!chem1 || chem1.state !== 'connected' || Math.abs(chem1.since - (first?.since ?? 0)) > 1_000 || chem1.reconnects !== 0)
        drops.push(JSON.stringify(chem1));
      await sleep(100);
    }
  })();
  const stop = async (): Promise<{ paused: string[]; drops: string[] }> => {
    running = false;
    await loop;
    return { paused, drops };
  };
  cleanups.push(() => void stop());
  return { stop };
}

describe('labgate run: SIGHUP reloads the configuration', () => {
  it('adds, restarts, remaps and removes instruments while another streams into both sinks; an invalid file changes nothing', { timeout: 90_000 }, async () => {
    const { dir, cable } = await cabledScratch('reload', cleanups);
    mkdirSync(join(dir, 'b'));
    const cableB = new Cable(join(dir, 'b'));
    await cableB.plug();
    cleanups.push(() => cableB.unplug());
    const lims = await startLims();
    cleanups.push(() => lims.stop());
    const pg = await centralDatabase();
    cleanups.push(() => pg.close());
    const httpPort = await freePort();

    const chem1 = (codes: readonly string[]): object => astmInstrument('chem1', cable.device, codes);
    const chem3 = (baudRate: number): object => ({
      ...astmInstrument('chem3', cableB.device, MAPPED),
      transport: { kind: 'serial', path: cableB.device, baudRate },
    });
    const setup = (instruments: object[]): GatewaySetup => ({ dir, httpPort, lims, pg, instruments });
    const file = writeConfig(setup([chem1(MAPPED)]));
    const gateway = new GatewayChild(file, httpPort, dir);
    cleanups.push(() => gateway.stopIfRunning());
    await gateway.start();
    await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')?.state === 'connected', 10_000, 'chem1 connected');

    // chem1 streams: a message every 20 ms, each ACKed one noted; a CRP message goes out when one is asked for.
    const streaming = await analyzerOn(cable);
    const acked: string[] = [];
    const outcomes: EmulatorOutcome[] = [];
    const extra: string[] = [];
    let stop = false;
    const stream = (async () => {
      for (let i = 0; !stop; i++) {
        const crp = extra.shift();
        const accession = crp ?? `S-${i}`;
        const outcome = await streaming
          .send([crp ? crpMessage(crp) : astmMessage(accession, PER)])
          .catch((err: Error): EmulatorOutcome => ({ kind: 'aborted', reason: err.message, restarts: 0 }));
        outcomes.push(outcome);
        if (outcome.kind === 'sent') acked.push(accession);
        await sleep(20);
      }
    })();
    cleanups.push(async () => {
      stop = true;
      await stream;
    });
    const sendCrp = async (accession: string): Promise<void> => {
      extra.push(accession);
      await until(() => acked.includes(accession), 10_000, `${accession} ACKed`);
    };
    await until(() => acked.length >= 10, 10_000, 'chem1 streaming');
    const health = watch(gateway);
    await sendCrp('CRP-1');

    // Added: chem3 starts on the second cable, and its first result reaches both sinks.
    writeConfig(setup([chem1(MAPPED), chem3(115_200)]));
    const added = await reload(gateway, undefined);
    expect(added).toMatchObject({ outcome: 'applied', summary: 'chem3 started' });
    await until(async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem3')?.state === 'connected', 10_000, 'chem3 connected');
    const analyzerB = await analyzerOn(cableB);
    expect(await analyzerB.send([astmMessage('B-1', PER)])).toMatchObject({ kind: 'sent' });
    await until(
      async () => {
        const mine = readStore(gateway.dataDir).results.filter((r) => r.accession === 'B-1');
        return mine.length === PER && (await Promise.all(mine.map((r) => lims.recordStatus(r.recordId)))).every((s) => s === 200);
      },
      15_000,
      "chem3's first results in the LIMS",
    );

    // Changed: chem3 restarts alone (a new baud rate); chem1 gets CRP in its mapping, from its next message on.
    writeConfig(setup([chem1([...MAPPED, 'CRP']), chem3(9_600)]));
    const changed = await reload(gateway, added);
    expect(changed).toMatchObject({ outcome: 'applied', summary: 'chem3 restarted (transport changed); chem1: the new mapping from its next message' });
    await until(
      async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem3')?.state === 'connected',
      10_000,
      'chem3 connected again',
    );
    expect(await analyzerB.send([astmMessage('B-2', PER)])).toMatchObject({ kind: 'sent' });
    await sendCrp('CRP-2');

    // Reprocess on the page: the capture the old mapping rejected is delivered now.
    const rejected = readStore(gateway.dataDir).captures.filter((c) => c.status === 'rejected');
    expect(rejected).toHaveLength(1);
    const page = await call(httpPort, 'GET', '/');
    expect(page.body).toContain('Configuration reloaded');
    const cookie = sessionCookie(page);
    const reprocessed = await post(httpPort, '/actions/reprocess-capture', cookie, { csrf: csrfOf(page.body), id: String(rejected[0]!.id) });
    expect(reprocessed.status).toBe(303);

    // Removed: chem3 stops; its cable stays plugged.
    writeConfig(setup([chem1([...MAPPED, 'CRP'])]));
    const removed = await reload(gateway, changed);
    expect(removed).toMatchObject({ outcome: 'applied', summary: 'chem3 stopped' });
    expect((await gateway.health()).body.instruments.map((i) => i.instrument)).toEqual(['chem1']);

    // Invalid: a bad baud rate beside a new instrument; neither is applied, and the page, /healthz and the log say so.
    const good = readFileSync(file, 'utf8');
    const invalid = JSON.parse(good) as { instruments: Record<string, unknown>[] };
    invalid.instruments[0] = { ...invalid.instruments[0], transport: { kind: 'serial', path: cable.device, baudRate: 'fast' } };
    invalid.instruments.push(chem3(115_200) as Record<string, unknown>);
    writeFileSync(file, JSON.stringify(invalid));
    const refused = await reload(gateway, removed);
    expect(refused.outcome).toBe('refused');
    const after = (await gateway.health()).body;
    expect(after.instruments.map((i) => i.instrument)).toEqual(['chem1']);
    expect(after.reasons.some((r) => r.startsWith('configuration: the last reload was refused'))).toBe(true);
    expect((await call(httpPort, 'GET', '/')).body).toContain('Configuration not applied');
    await until(() => acked.length >= 20 + acked.indexOf('CRP-2'), 10_000, 'chem1 still streaming after the refused reload');

    const seen = await health.stop();
    expect(seen.paused, 'the sinks never paused').toEqual([]);
    expect(seen.drops, "chem1's link never dropped").toEqual([]);

    // Removed while it streams: chem1's message in flight is finished or discarded as on unplug, never kept in part.
    const before = outcomes.length;
    writeConfig(setup([]));
    expect(await reload(gateway, refused)).toMatchObject({ outcome: 'applied', summary: 'chem1 stopped' });
    await until(() => outcomes.slice(before).some((o) => o.kind !== 'sent'), 10_000, "chem1's analyzer left unanswered");
    stop = true;
    await stream;
    expect(
      outcomes.slice(0, before).filter((o) => o.kind !== 'sent'),
      'every message before the removal was ACKed',
    ).toEqual([]);
    expect((await gateway.health()).body.instruments).toEqual([]);
    await gateway.drained();
    const exit = await gateway.kill('SIGTERM');
    expect(exit).toMatchObject({ code: 0, signal: null });

    const log = readFileSync(gateway.log, 'utf8');
    expect(log.match(/"configuration reloaded"/g)).toHaveLength(4);
    expect(log).toContain('"configuration reload refused"');
    const view = readStore(gateway.dataDir);
    const count = (accession: string): number => view.results.filter((r) => r.accession === accession).length;
    const streamed = acked.filter((a) => a.startsWith('S-'));
    const stored = [...new Set(view.results.map((r) => r.accession))].filter((a) => a.startsWith('S-'));
    expect(
      streamed.filter((a) => count(a) !== PER),
      'every ACKed message stored whole, once',
    ).toEqual([]);
    expect(
      stored.filter((a) => count(a) !== PER),
      'no message stored in part',
    ).toEqual([]);
    expect(stored.filter((a) => !acked.includes(a)).length, 'at most the message in flight at the removal stored without its ACK').toBeLessThanOrEqual(1);
    expect([count('CRP-1'), count('CRP-2'), count('B-1'), count('B-2')]).toEqual([1, 1, PER, PER]);
    expect(view.results).toHaveLength(stored.length * PER + 2 + 2 * PER);
    await expectDeliveredOnce(view, pg, lims);
  });
});
