// `labgate run` as a child process with all three real sinks (PostgreSQL: LABGATE_TEST_PG_URL or the embedded PGlite;
// the LIMS and FHIR test servers as their own processes): a cable pulled in the middle of a message, 30 SIGKILLs at random
// moments while an analyzer keeps sending, and (issue 4) an HL7 sender over TCP whose gateway dies between
// receipt and commit. Every time: what was ACKed is stored and delivered to both sinks exactly once, and nothing
// un-ACKed is kept partially. The tests run one after another: with PGlite only one connection exists at a time,
// and the central database is read only while no gateway runs.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator, type EmulatorOutcome } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import type { TestDatabase } from '../postgres/pg.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { astmCodes, astmInstrument, astmMessage, Hl7TcpSender } from './analyzers.js';
import { centralDatabase, expectDeliveredOnce, expectOneObservationEach } from './central.js';
import { startFhir, type FhirChild } from './fhir-child.js';
import { Cable, freePort, GatewayChild, requireSocat, scratch, sleep, startLims, until, writeConfig, type LimsChild } from './harness.js';
import { readStore, type StoreView } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Results per ASTM message; with 64-byte frames a message spans several frames, so a kill can land inside it. */
const PER = 5;

/** The sinks and a scratch directory for one test. */
async function sinks(name: string): Promise<{ dir: string; lims: LimsChild; pg: TestDatabase; fhir: FhirChild }> {
  const s = scratch(name);
  cleanups.push(s.cleanup);
  const lims = await startLims();
  cleanups.push(() => lims.stop());
  const fhir = await startFhir();
  cleanups.push(() => fhir.stop());
  const pg = await centralDatabase();
  cleanups.push(() => pg.close());
  return { dir: s.dir, lims, pg, fhir };
}

const failed = (err: Error): EmulatorOutcome => ({ kind: 'aborted', reason: `error: ${err.message}`, restarts: 0 });

/** Nothing partial: every capture is a whole accepted message, each message's results all there with one outbox row per sink. */
function expectNothingPartial(view: StoreView, where: string): Map<string, number> {
  expect(view.integrity, where).toBe('ok');
  expect(
    view.captures.filter((c) => c.status !== 'accepted' || c.resultCount !== PER),
    `${where}: partial captures`,
  ).toEqual([]);
  const perAccession = new Map<string, number>();
  for (const r of view.results) perAccession.set(r.accession, (perAccession.get(r.accession) ?? 0) + 1);
  expect(
    [...perAccession].filter(([, n]) => n !== PER),
    `${where}: messages stored partially`,
  ).toEqual([]);
  const outbox = new Map<string, string[]>();
  for (const o of view.outbox) outbox.set(o.dedupKey, [...(outbox.get(o.dedupKey) ?? []), o.sink]);
  expect(
    view.results.filter((r) => outbox.get(r.dedupKey)?.sort().join() !== 'fhir,lims,postgres'),
    `${where}: results without their outbox rows`,
  ).toEqual([]);
  expect(outbox.size, `${where}: outbox rows without a result`).toBe(view.results.length);
  return perAccession;
}

describe('labgate run with PostgreSQL and the LIMS: exactly once across unplugs and crashes', () => {
  it(
    'a cable pulled in the middle of a message: nothing partial is stored, the port comes back, the re-sent message is stored once',
    { timeout: 60_000 },
    async () => {
      requireSocat();
      const { dir, lims, pg, fhir } = await sinks('unplug');
      const cable = new Cable(dir);
      await cable.plug();
      cleanups.push(() => cable.unplug());
      const httpPort = await freePort();
      const gateway = new GatewayChild(
        writeConfig({ dir, httpPort, instruments: [astmInstrument('chem1', cable.device, astmCodes)], lims, pg, fhir }),
        httpPort,
        dir,
      );
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const chem1 = async () => (await gateway.health()).body.instruments.find((i) => i.instrument === 'chem1')!;
      await until(async () => (await chem1()).state === 'connected', 10_000, 'chem1 connected');
      const pid = gateway.pid;

      // The analyzer pauses before its third frame; the cable is pulled during the pause.
      const first = await cable.openAnalyzer();
      cleanups.push(() => first.close());
      let acks = 0;
      first.onData((data) => (acks += data.filter((b) => b === 0x06).length));
      // Its session never ends: serialport queues writes to a closed port until it opens again, which it never does.
      void new AstmEmulator(first, systemClock, {
        maxFrameBytes: 64,
        replyTimeoutMs: 1_000,
        maxRestarts: 0,
        faults: { pause: [{ beforeFrame: 2, ms: 1_500 }] },
      })
        .send([astmMessage('PULLED-1', PER)])
        .catch(failed);
      await until(() => acks >= 3, 5_000, 'ENQ and two frames ACKed');
      await cable.unplug();
      await until(async () => (await chem1()).state !== 'connected', 5_000, 'the gateway to notice the unplug');
      await sleep(1_500);
      const during = readStore(gateway.dataDir);
      expect(during.captures, 'nothing of the incomplete message is stored').toEqual([]);
      expect(during.results).toEqual([]);

      // Plugged back: the same process reopens the port; the analyzer re-sends the whole message.
      await cable.plug();
      await until(async () => (await chem1()).state === 'connected', 15_000, 'chem1 reconnected');
      expect((await chem1()).reconnects).toBe(1);
      const second = await cable.openAnalyzer();
      cleanups.push(() => second.close());
      expect(await new AstmEmulator(second, systemClock, { maxFrameBytes: 64, replyTimeoutMs: 1_000 }).send([astmMessage('PULLED-1', PER)])).toMatchObject({
        kind: 'sent',
      });
      expect(gateway.pid, 'the gateway kept running').toBe(pid);

      await gateway.drained();
      expect(await gateway.kill('SIGTERM')).toMatchObject({ code: 0, signal: null });
      const view = readStore(gateway.dataDir);
      expect(view.captures).toHaveLength(1);
      expect(expectNothingPartial(view, 'after replug').get('PULLED-1')).toBe(PER);
      await expectDeliveredOnce(view, pg, lims);
      await expectOneObservationEach(view, fhir);
    },
  );

  it(
    '30 SIGKILLs at random moments while the analyzer re-sends what was not ACKed: every ACKed result in every sink exactly once, no duplicate Observation',
    { timeout: 150_000 },
    async () => {
      requireSocat();
      const KILLS = 30;
      const started = Date.now();
      const { dir, lims, pg, fhir } = await sinks('sigkill');
      const cable = new Cable(dir);
      await cable.plug();
      cleanups.push(() => cable.unplug());
      const httpPort = await freePort();
      const gateway = new GatewayChild(
        writeConfig({ dir, httpPort, instruments: [astmInstrument('chem1', cable.device, astmCodes)], lims, pg, fhir }),
        httpPort,
        dir,
      );
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start();
      const analyzer = await cable.openAnalyzer();
      cleanups.push(() => analyzer.close());
      // A silent gateway costs the analyzer 800 ms, then it starts the message over.
      const emulator = new AstmEmulator(analyzer, systemClock, { maxFrameBytes: 64, replyTimeoutMs: 800, maxRestarts: 0, busyRetryMs: 100 });

      const acked: string[] = [];
      let interruptedSessions = 0;
      let killing = true;
      const sender = (async () => {
        // Until the last kill, then three more messages to a gateway that stays up.
        for (let i = 0, tail = 3; killing || tail-- > 0; i++) {
          const accession = `KILL-${i}`;
          for (;;) {
            const outcome = await emulator.send([astmMessage(accession, PER)]).catch(failed);
            if (outcome.kind === 'sent') break;
            interruptedSessions++;
            await sleep(20);
          }
          acked.push(accession);
        }
      })();

      let early = false;
      for (let kill = 1; kill <= KILLS; kill++) {
        await sleep(early ? Math.random() * 400 : 150 + Math.random() * 650);
        const ackedBefore = [...acked];
        const exit = await gateway.kill('SIGKILL');
        expect(exit.signal).toBe('SIGKILL');
        // Durable before ACK: whatever the analyzer had been ACKed is stored; nothing is stored partially.
        const view = readStore(gateway.dataDir);
        const stored = expectNothingPartial(view, `after kill ${kill}`);
        expect(
          ackedBefore.filter((a) => stored.get(a) !== PER),
          `after kill ${kill}: ACKed but not stored`,
        ).toEqual([]);
        // The data-directory lock died with the process: the restart takes it at once. Every fifth kill lands
        // while the next gateway is still starting (loading, opening the store, releasing in-flight rows).
        early = kill % 5 === 4;
        if (early) gateway.spawn();
        else await gateway.start();
      }
      killing = false;
      await sender;

      await gateway.drained(60_000);
      expect(await gateway.kill('SIGTERM')).toMatchObject({ code: 0, signal: null });
      const view = readStore(gateway.dataDir);
      const stored = expectNothingPartial(view, 'at the end');
      expect(acked.length).toBeGreaterThan(KILLS);
      expect([...stored.keys()].sort()).toEqual([...acked].sort());
      // The kills landed in the middle of sessions, not only between them.
      expect(interruptedSessions).toBeGreaterThanOrEqual(KILLS / 2);
      await expectDeliveredOnce(view, pg, lims);
      await expectOneObservationEach(view, fhir);
      // What the random kills happened to hit, for the log: a commit whose ACK was lost (the re-sent message was
      // absorbed), a sink write whose outcome was lost (absorbed as a replay by PostgreSQL, answered from the
      // idempotency key by the LIMS).
      const resent = view.captures.length - acked.length;
      const pgReplays = await pg.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${pg.schema}".result_load WHERE load_count > 1`);
      const limsReplays = (await lims.stats()).replays;
      const fhirFound = (await fhir.stats()).unchanged;
      console.log(
        `sigkill e2e: ${KILLS} kills, ${acked.length} messages ACKed, ${interruptedSessions} sessions interrupted, ${resent} committed-but-unACKed messages re-sent and absorbed, ` +
          `${pgReplays.rows[0]?.n} PostgreSQL replays, ${limsReplays} LIMS idempotent replays, ${fhirFound} FHIR Observations found by their identifier, ${Date.now() - started} ms`,
      );
    },
  );

  it(
    'HL7 over TCP (issue 4): the gateway killed between receipt and commit sends no AA; the sender re-sends after the restart and the result is stored once',
    { timeout: 60_000 },
    async () => {
      const { dir, lims, pg, fhir } = await sinks('hl7-kill');
      const [httpPort, hl7Port] = [await freePort(), await freePort()];
      const instrument = {
        id: 'bs240',
        driver: 'hl7',
        timezone: 'Europe/Vienna',
        transport: { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port },
        mapping: mindrayBs.profile.mapping,
        options: mindrayBs.options,
      };
      const gateway = new GatewayChild(writeConfig({ dir, httpPort, instruments: [instrument], lims, pg, fhir }), httpPort, dir);
      cleanups.push(() => gateway.stopIfRunning());
      await gateway.start({ LABGATE_FAULT_PAUSE_BEFORE_COMMIT_MS: '20000' });
      const sender = new Hl7TcpSender(hl7Port);
      cleanups.push(() => sender.close());
      await sender.connect();

      const reply = sender.send(mindrayBs.payload, 30_000);
      await until(() => readFileSync(gateway.log, 'utf8').includes('labgate fault: pausing'), 10_000, 'the gateway to hold the message before its commit');
      await gateway.kill('SIGKILL');
      expect(await reply, 'no acknowledgment for a message that was never committed').toBe('closed');
      expect(readStore(gateway.dataDir).captures, 'nothing was committed').toEqual([]);

      await gateway.start();
      await sender.connect();
      expect(await sender.send(mindrayBs.payload)).toBe('AA');
      await gateway.drained();
      expect(await gateway.kill('SIGTERM')).toMatchObject({ code: 0, signal: null });

      const view = readStore(gateway.dataDir);
      expect(view.integrity).toBe('ok');
      expect(view.captures).toEqual([{ id: 1, status: 'accepted', resultCount: 3 }]);
      expect(view.results.map((r) => r.accession)).toEqual(['2410290017', '2410290017', '2410290017']);
      await expectDeliveredOnce(view, pg, lims);
      await expectOneObservationEach(view, fhir);
    },
  );
});
