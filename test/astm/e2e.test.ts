// End to end: the analyzer emulator on one end of a cable, the ASTM runner and a real Store on the other.
// The same scenarios run over the in-memory transport pair and over a real socat pseudo-terminal pair with
// the native serialport binding. socat is required: without it this suite fails, it never skips.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AstmEmulator, frameTexts, type EmulatorFaults } from '../../drivers/astm/emulator.js';
import { createAstmRunner } from '../../drivers/astm/runner.js';
import type { DriverEvent, IngestOutcome } from '../../src/runner-contract.js';
import { systemClock } from '../../src/clock.js';
import type { InboundMessage } from '../../src/message.js';
import { openStore, type Store } from '../../src/store/store.js';
import { type IngestSummary } from '../../src/message.js';
import { SerialTransport } from '../../src/transport/serial.js';
import type { Transport } from '../../src/transport/transport.js';
import { options, profile } from './profile.js';
import { transportPair } from './pair.js';
import { silentLog } from '../../src/log.js';

const SOCAT = '/usr/bin/socat';
const codes = ['GLU', 'NA', 'K', 'CL', 'CRP'];
const p = profile(
  codes.map((code, i) => ({ code, loinc: `2000${i}-0`, unit: 'mmol/L' })),
  { id: 'e2e-chem' },
);
const silent = silentLog;

/** `n` messages of `per` results each; every result has its own key. */
function messages(tag: string, n: number, per: number): string[] {
  return Array.from(
    { length: n },
    (_, m) =>
      [
        'H|\\^&|||Emu^1|||||||P|1|20260701120000',
        'P|1',
        `O|1|${tag}-${m}`,
        ...Array.from(
          { length: per },
          (_, i) => `R|${i + 1}|^^^${codes[i % 5]}|${m}.${i}|mmol/L||N||F||||20260701${String(10 + Math.floor(i / 5)).padStart(2, '0')}0000`,
        ),
        'L|1|N',
      ].join('\r') + '\r',
  );
}

interface Cable {
  analyzer: Transport;
  gateway: Transport;
  close(): Promise<void>;
}

async function fakeCable(): Promise<Cable> {
  const { analyzer, gateway } = transportPair();
  return { analyzer, gateway, close: async () => {} };
}

async function waitFor(check: () => boolean, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function openPort(path: string): Promise<SerialPort> {
  const port = new SerialPort({ path, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  return port;
}

async function socatCable(dir: string): Promise<Cable> {
  expect(existsSync(SOCAT), `${SOCAT} is required for the end-to-end suite`).toBe(true);
  const [a, b] = [join(dir, 'a'), join(dir, 'b')];
  const socat: ChildProcess = spawn(SOCAT, ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
  await waitFor(() => existsSync(a) && existsSync(b), 5_000, 'socat pseudo-terminals');
  const [analyzer, gateway] = [new SerialTransport(await openPort(a)), new SerialTransport(await openPort(b))];
  return {
    analyzer,
    gateway,
    close: async () => {
      await Promise.all([analyzer.close(), gateway.close()]);
      socat.kill('SIGTERM');
    },
  };
}

describe.each(['fake', 'socat'] as const)('ASTM end to end over the %s cable, into a real Store', (kind) => {
  let dir: string;
  let store: Store;
  let cable: Cable;
  let summaries: IngestSummary[];
  let events: DriverEvent[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'labgate-astm-e2e-'));
    store = openStore({ dataDir: join(dir, 'data'), sinks: ['postgres', 'lims'], now: () => Date.now() });
    cable = kind === 'fake' ? await fakeCable() : await socatCable(dir);
    summaries = [];
    events = [];
    const ingest = (m: InboundMessage): IngestOutcome => {
      try {
        const summary = store.ingest(m);
        summaries.push(summary);
        return { kind: 'committed', summary, rejections: m.rejections };
      } catch (err) {
        return { kind: 'unavailable', reason: (err as Error).message };
      }
    };
    createAstmRunner(
      { profile: p, transport: cable.gateway, ingest, accepting: () => true, clock: systemClock, log: silent, onEvent: (e) => events.push(e) },
      options(),
    ).start();
  });

  afterAll(async () => {
    await cable?.close();
    store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (msgs: string[], faults: EmulatorFaults = {}, maxFrameBytes = 247) =>
    // The standard's 15 s reply timeout, shortened so a dropped ACK costs the test 1.5 s.
    new AstmEmulator(cable.analyzer, systemClock, { maxFrameBytes, replyTimeoutMs: 1_500, faults }).send(msgs);

  it('the emulator sends, labgate ACKs, every result is in the store', async () => {
    const outcome = await send(messages('clean', 3, 20));
    expect(outcome).toMatchObject({ kind: 'sent', restarts: 0, retransmissions: 0 });
    expect(summaries.reduce((n, s) => n + s.inserted, 0)).toBe(60);
    expect(store.counts().results).toBe(60);
  });

  it('with corrupted checksums, a duplicate frame and dropped ACKs, every result arrives exactly once', async () => {
    const before = store.counts().results;
    const seen = summaries.length;
    const msgs = messages('faulty', 2, 15);
    // The ACK of an intermediate frame, then (in the resent session) the ACK of the frame completing message 0.
    const completing = frameTexts(Buffer.from(msgs[0]!, 'latin1'), 80, 'message').length - 1;
    const faults = { corruptChecksum: [0, 3, 7], duplicateFrame: [2, 5], dropAck: [4, completing] };
    const outcome = await send(msgs, faults, 80);
    expect(outcome.kind).toBe('sent');
    expect(outcome.restarts).toBe(2);
    expect(events.filter((e) => e.kind === 'checksum-error').length).toBeGreaterThanOrEqual(3);
    const mine = summaries.slice(seen);
    // A dropped ACK on a completing frame makes the analyzer resend a committed message: the store absorbs it.
    expect(mine.reduce((n, s) => n + s.inserted, 0)).toBe(30);
    expect(mine.reduce((n, s) => n + s.absorbed, 0)).toBe(15);
    expect(mine.reduce((n, s) => n + s.conflicts, 0)).toBe(0);
    expect(store.counts().results - before).toBe(30);
    const keys = store
      .recentResults(1000)
      .filter((r) => r.accession.startsWith('faulty-'))
      .map((r) => r.dedupKey);
    expect(new Set(keys).size).toBe(30);
    expect(keys).toHaveLength(30);
  });
});
