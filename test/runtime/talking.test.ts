// A session "talks" only when its driver reads protocol traffic: each driver tells its transport (Transport.talking),
// and the listening endpoint lets a waiting connection replace a session whose last traffic is 30 s old, whatever
// bytes it sent since. So a stranger sending a NUL every 20 s to an instrument port without an allow-list holds it
// for 30 s at most, and the idle timeout (transport.idleTimeoutSeconds) closes its session as if it had sent nothing.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { createLineRunner } from '../../drivers/line/runner.js';
import { MAX_UNREAD_BYTES, SocketTransport } from '../../src/transport/tcp.js';
import { TcpServerEndpoint } from '../../src/transport/tcp-server.js';
import type { CloseInfo } from '../../src/transport/transport.js';
import { harness } from '../astm/harness.js';
import { bytes as astmBytes, frame } from '../astm/mnemonics.js';
import { options, profile } from '../astm/profile.js';
import { makeContext } from '../hl7/context.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { bytes as hl7Bytes, mllp } from '../hl7/mnemonic.js';
import { loadLayout, spotchemReport } from '../line/layouts.js';
import { ManualClock, settle } from '../fixtures/manual-clock.js';
import { until } from '../fixtures/until.js';

describe('each driver says when its session is talking', () => {
  it('ASTM: ENQ, a frame and EOT are traffic; NUL bytes and line noise are not', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(Buffer.from([0]));
    h.transport.emitData('garbage\r\n');
    expect(h.transport.talks).toBe(0);
    h.transport.emitData(astmBytes('<ENQ>'));
    expect(h.transport.talks).toBe(1);
    h.transport.emitData(Buffer.from([0]));
    expect(h.transport.talks).toBe(1);
    h.transport.emitData(astmBytes(frame(1, 'H|\\^&<CR>', false)));
    h.transport.emitData(astmBytes('<EOT>'));
    expect(h.transport.talks).toBe(3);
  });

  it('HL7: an MLLP block is traffic; bytes outside blocks are not', async () => {
    const h = makeContext(mindrayBs.profile);
    createHl7Runner(h.ctx, mindrayBs.options).start();
    h.transport.emitData(Buffer.from([0]));
    expect(h.transport.talks).toBe(0);
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(h.transport.talks).toBe(1);
  });

  it('line: a printed line is traffic; NUL bytes and blank lines are not', () => {
    const { profile: lineProfile, options: lineOptions } = loadLayout('arkray-spotchem-el.yaml');
    const h = makeContext(lineProfile);
    createLineRunner(h.ctx, lineOptions).start();
    h.transport.emitData(Buffer.from([0, 0x0a, 0x20, 0x0a]));
    expect(h.transport.talks).toBe(0);
    h.transport.emitData(hl7Bytes(spotchemReport));
    expect(h.transport.talks).toBeGreaterThan(0);
  });
});

describe('a listening port held by bytes that are not traffic', () => {
  const sockets: Socket[] = [];
  let endpoint: TcpServerEndpoint | undefined;
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await endpoint?.close();
  });

  async function dial(port: number): Promise<{ socket: Socket; closed: () => boolean }> {
    const socket = createConnection({ host: '127.0.0.1', port });
    sockets.push(socket);
    let closed = false;
    socket.on('error', () => {});
    socket.on('close', () => (closed = true));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return { socket, closed: () => closed };
  }

  it('gives way to the waiting analyzer 30 s after its last traffic, a NUL every 20 s notwithstanding', async () => {
    const clock = new ManualClock();
    endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0, replaceSilentMs: 30_000, clock });
    const { port } = await endpoint.listen();
    const first = endpoint.open();
    const stranger = await dial(port);
    const session = await first;
    let received = 0;
    session.onData((d) => (received += d.length));
    let closed: CloseInfo | undefined;
    session.onClose((info) => (closed = info));
    const analyzer = await dial(port);
    // The stranger's NUL at 20 s is bytes, not traffic: at 30 s its session has been silent for 30 s.
    clock.advance(20_000);
    stranger.socket.write(Buffer.from([0]));
    await until(() => received === 1);
    clock.advance(10_000);
    await until(() => stranger.closed());
    expect(closed?.reason).toMatch(/^replaced by a newer connection from 127\.0\.0\.1:\d+ after 30 s of silence$/);
    expect(analyzer.closed()).toBe(false);
  });

  it('closes a session idle for idleMs of traffic, a NUL every 20 s notwithstanding; traffic restarts the wait', async () => {
    const clock = new ManualClock();
    endpoint = new TcpServerEndpoint({ host: '127.0.0.1', port: 0, idleMs: 60_000, clock });
    const { port } = await endpoint.listen();
    const opened = endpoint.open();
    const stranger = await dial(port);
    const session = await opened;
    let received = 0;
    session.onData((d) => (received += d.length));
    let closed: CloseInfo | undefined;
    session.onClose((info) => (closed = info));
    for (const at of [20_000, 40_000]) {
      clock.advance(20_000);
      stranger.socket.write(Buffer.from([0]));
      await until(() => received === at / 20_000);
    }
    clock.advance(20_000);
    await until(() => stranger.closed());
    expect(closed?.reason).toBe('no traffic for 60 s; closed by labgate');

    // A session whose driver reads traffic at 50 s stays open until 110 s.
    const next = endpoint.open();
    const analyzer = await dial(port);
    const talking = await next;
    clock.advance(50_000);
    talking.talking?.();
    clock.advance(59_000);
    await settle();
    expect(analyzer.closed()).toBe(false);
    clock.advance(1_000);
    await until(() => analyzer.closed());
  });
});

describe('a peer that never reads what labgate writes', () => {
  it(`is closed once more than ${MAX_UNREAD_BYTES} bytes wait unread, saying why`, async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const peer = createConnection({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
    peer.pause();
    peer.on('error', () => {});
    const transport = new SocketTransport(await accepted);
    let closed: CloseInfo | undefined;
    transport.onClose((info) => (closed = info));
    const chunk = Buffer.alloc(64 * 1024, 0x06);
    for (let i = 0; i < 512 && !closed; i++) {
      void transport.write(chunk).catch(() => undefined);
      await new Promise((r) => setImmediate(r));
    }
    await until(() => closed !== undefined);
    expect(closed?.reason).toMatch(/^the peer left \d+ bytes unread; closed by labgate$/);
    peer.destroy();
    await new Promise((r) => server.close(r));
  });
});
