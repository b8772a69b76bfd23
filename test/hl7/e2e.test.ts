// HL7 end to end over real byte pipes: a socat pseudo-terminal pair with the native serialport
// binding, and a TCP connection with the project's SocketTransport. The analyzer side waits for
// each acknowledgment like a real sender; AA must only follow a commit.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { initialMllpState, mllpStep, type MllpState } from '../../drivers/hl7/mllp.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { systemClock } from '../../src/clock.js';
import { type DriverRunner } from '../../src/runner-contract.js';
import { SocketTransport } from '../../src/transport/tcp.js';
import type { Transport } from '../../src/transport/transport.js';
import { makeContext } from './context.js';
import { hematology25, lri251, mindrayBs } from './fixtures.js';
import { mllp } from './mnemonic.js';
import { openSerialTransport } from './serial-adapter.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The analyzer end: sends one message and resolves with the MSA-1 of the acknowledgment. */
function analyzerEnd(transport: Transport) {
  let state: MllpState = initialMllpState;
  const waiting: ((code: string) => void)[] = [];
  transport.onData((data) => {
    const step = mllpStep(state, data, 1 << 20);
    state = step.state;
    for (const e of step.effects) {
      if (e.kind !== 'message') continue;
      const parsed = parseMessage(e.raw.toString('latin1'));
      const msa = parsed.kind === 'message' ? parsed.message.segments.find((s) => s.id === 'MSA') : undefined;
      waiting.shift()?.(msa && parsed.kind === 'message' ? valueAt(msa, parsed.message.delimiters, { field: 1, component: 1, subcomponent: 1 }) : '?');
    }
  });
  return {
    send: (payload: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no acknowledgment within 5 s')), 5000);
        waiting.push((code) => (clearTimeout(timer), resolve(code)));
        void transport.write(mllp(payload));
      }),
  };
}

function gateway(transport: Transport, fixture = mindrayBs) {
  const h = makeContext(fixture.profile);
  const ctx = { ...h.ctx, transport, clock: systemClock };
  const runner: DriverRunner = createHl7Runner(ctx, fixture.options);
  runner.start();
  cleanups.push(() => runner.stop());
  return { ...h, runner };
}

async function scenario(analyzerTransport: Transport, gatewayTransport: Transport): Promise<void> {
  const g = gateway(gatewayTransport);
  const analyzer = analyzerEnd(analyzerTransport);
  expect(await analyzer.send(mindrayBs.payload)).toBe('AA');
  expect(g.ingest.messages).toHaveLength(1);
  // The commit fails (disk full): the analyzer gets AR, keeps its result and re-sends it.
  g.ingest.mode = 'throw';
  const second = mindrayBs.payload.replace('|12|P|', '|13|P|').replaceAll('2410290017', '2410290018');
  expect(await analyzer.send(second)).toBe('AR');
  g.ingest.mode = 'ok';
  expect(await analyzer.send(second)).toBe('AA');
  // A retransmission after a lost AA is absorbed by the key: stored once.
  expect(await analyzer.send(second)).toBe('AA');
  expect(g.ingest.keys.size).toBe(6);
  expect(g.timeline.filter((t) => t.startsWith('commit'))).toHaveLength(3);
  expect(await analyzer.send(mindrayBs.payload.replace('|GLU|', '|UREA|'))).toBe('AE');
}

describe('HL7 over a socat pseudo-terminal pair', () => {
  test('ACK only after commit; AR on a failed commit; the resend is stored once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-hl7-pty-'));
    const [a, b] = [join(dir, 'gateway'), join(dir, 'analyzer')];
    const socat: ChildProcess = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
    cleanups.push(() => {
      socat.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });
    for (let i = 0; i < 100 && !(existsSync(a) && existsSync(b)); i += 1) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(a) && existsSync(b), 'socat did not create the pty pair').toBe(true);
    const gatewayPort = await openSerialTransport(a);
    const analyzerPort = await openSerialTransport(b);
    cleanups.push(
      () => gatewayPort.close(),
      () => analyzerPort.close(),
    );
    await scenario(analyzerPort, gatewayPort);
  });
});

describe('HL7 over TCP', () => {
  test('the same scenario over a socket; enhanced mode answers over the same connection', async () => {
    const accepted = new Promise<Socket>((resolve) => {
      const server: Server = createServer(resolve);
      server.listen(0, '127.0.0.1');
      cleanups.push(() => new Promise((r) => server.close(() => r())));
      server.on('listening', () => {
        const client = createConnection((server.address() as AddressInfo).port, '127.0.0.1');
        clientReady(new SocketTransport(client));
      });
    });
    let clientReady!: (t: SocketTransport) => void;
    const client = new Promise<SocketTransport>((r) => (clientReady = r));
    const gatewaySide = new SocketTransport(await accepted);
    const analyzerSide = await client;
    cleanups.push(
      () => analyzerSide.close(),
      () => gatewaySide.close(),
    );
    await scenario(analyzerSide, gatewaySide);
  });

  test('several instruments on their own connections do not share state', async () => {
    const pairs = await Promise.all(
      [lri251, hematology25].map(async (fixture) => {
        const server = createServer();
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
        cleanups.push(() => new Promise((r) => server.close(() => r())));
        const accepted = new Promise<Socket>((r) => server.once('connection', r));
        const client = new SocketTransport(createConnection((server.address() as AddressInfo).port, '127.0.0.1'));
        const g = gateway(new SocketTransport(await accepted), fixture);
        cleanups.push(() => client.close());
        return { fixture, client, g };
      }),
    );
    const codes = await Promise.all(pairs.map(({ fixture, client }) => analyzerEnd(client).send(fixture.payload)));
    expect(codes).toEqual(['AA', 'AA']);
    expect(pairs.map(({ g }) => g.ingest.messages[0]!.capture.instrumentId)).toEqual(['atellica', 'dxh']);
  });
});
