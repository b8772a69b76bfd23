// A peer sending MLLP blocks faster than they are committed: what waits for its commit stays under MAX_HELD_BYTES.
// Over TCP reading pauses (the peer waits in the network) and every message is committed and answered once the
// commits catch up; over a transport that cannot pause (a serial line) the messages past the cap are dropped
// unanswered, counted and logged, and the analyzer sends them again.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_HELD_BYTES, MESSAGE_COST } from '../../drivers/hl7/backlog.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import type { IngestOutcome } from '../../src/runner-contract.js';
import { SocketTransport } from '../../src/transport/tcp.js';
import type { Transport } from '../../src/transport/transport.js';
import { until } from '../fixtures/until.js';
import { makeContext, settle } from './context.js';
import { mindrayBs } from './fixtures.js';
import { mllp } from './mnemonic.js';

const PAD = 32_000;
/** Message `n`: the Mindray result with control id n and a note that makes it about 32 kB. */
const payload = (n: number): string => `${mindrayBs.payload.replace('|12|P|', `|${n}|P|`)}NTE|1||${'x'.repeat(PAD)}\r`;
const SIZE = Buffer.byteLength(payload(1000));
/** Bytes read once the held messages reach the cap: each is charged MESSAGE_COST beside its bytes. */
const AT_CAP = MAX_HELD_BYTES - Math.ceil(MAX_HELD_BYTES / SIZE) * MESSAGE_COST;

/** `count` messages as one byte stream, and cut into 64 KiB reads as a socket gives them. */
function stream(count: number): { whole: Buffer; chunks: Buffer[] } {
  const whole = Buffer.concat(Array.from({ length: count }, (_, i) => mllp(payload(1000 + i))));
  const chunks: Buffer[] = [];
  for (let at = 0; at < whole.length; at += 65_536) chunks.push(whole.subarray(at, at + 65_536));
  return { whole, chunks };
}

/** A runner whose commits wait until `release()`. */
function gated(transport?: (fake: ReturnType<typeof makeContext>['transport']) => Transport) {
  const h = makeContext(mindrayBs.profile);
  if (transport) h.ctx.transport = transport(h.transport);
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const commit = h.ctx.ingest;
  h.ctx.ingest = async (message): Promise<IngestOutcome> => {
    await gate;
    return commit(message);
  };
  let read = 0;
  const onEvent = h.ctx.onEvent;
  h.ctx.onEvent = (e) => (e.kind === 'bytes' ? void (read += e.count) : onEvent(e));
  const runner = createHl7Runner(h.ctx, mindrayBs.options);
  runner.start();
  return { ...h, runner, release, read: () => read };
}

const ackCount = (written: Buffer): number => written.toString('latin1').split('MSA|AA|').length - 1;

describe(`messages waiting for their commit stay under ${MAX_HELD_BYTES} bytes`, () => {
  const count = Math.ceil((1.5 * MAX_HELD_BYTES) / SIZE);

  it('over a transport that can pause (TCP): reading pauses at the cap, resumes as commits catch up, nothing is lost', async () => {
    const h = gated();
    const { whole, chunks } = stream(count);
    for (const chunk of chunks) h.transport.emitData(chunk);
    await settle();
    expect(h.transport.paused).toBe(true);
    // Held: the cap, overshot by what the chunk that reached it completed at most.
    expect(h.read()).toBeGreaterThanOrEqual(AT_CAP);
    expect(h.read()).toBeLessThanOrEqual(MAX_HELD_BYTES + 65_536);
    expect(h.transport.waiting.length).toBeGreaterThan(0);
    h.release();
    await until(() => h.ingest.messages.length === count, 20_000, 'every message committed');
    expect(h.read()).toBe(whole.length);
    expect(h.transport.paused).toBe(false);
    expect(h.ingest.messages.map((m) => m.capture.raw.toString('latin1'))).toEqual(Array.from({ length: count }, (_, i) => payload(1000 + i)));
    await h.runner.stop();
    expect(ackCount(h.transport.allWritten())).toBe(count);
    expect(h.events.filter((e) => e.kind === 'discarded')).toEqual([]);
    expect(h.logs.filter((l) => l.includes('hl7 reading paused until the commits catch up')).length).toBeGreaterThan(0);
  });

  it('over one that cannot (a serial line): the messages past the cap are dropped unanswered, counted and logged', async () => {
    const h = gated((fake) => ({
      write: (d) => fake.write(d),
      onData: (l) => fake.onData(l),
      onClose: (l) => fake.onClose(l),
      close: () => fake.close(),
    }));
    const { chunks } = stream(count);
    for (const chunk of chunks) h.transport.emitData(chunk);
    await settle();
    // The first message is being committed; behind it, as many as fit under the cap.
    const kept = 1 + Math.floor(MAX_HELD_BYTES / (SIZE + MESSAGE_COST));
    const discarded = h.events.filter((e) => e.kind === 'discarded');
    expect(discarded).toHaveLength(count - kept);
    expect(discarded[0]).toEqual({ kind: 'discarded', reason: `HL7 message dropped unanswered: ${MAX_HELD_BYTES} bytes wait for their commit` });
    h.release();
    await until(() => h.ingest.messages.length === kept, 20_000, 'the kept messages committed');
    await h.runner.stop();
    expect(ackCount(h.transport.allWritten())).toBe(kept);
    expect(h.ingest.messages.at(-1)?.capture.raw.toString('latin1')).toBe(payload(1000 + kept - 1));
    expect(h.logs.filter((l) => l.includes('hl7 messages dropped: too many wait for their commit'))).toHaveLength(1);
    expect(h.logs.filter((l) => l.includes('were dropped')).join()).toContain(`"dropped":${count - kept}`);
  });

  describe('over a real socket', () => {
    const cleanups: (() => void)[] = [];
    afterEach(() => {
      for (const c of cleanups.splice(0)) c();
    });

    it('the peer waits in the network while the commits lag, and every message is answered once they catch up', async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanups.push(() => void server.close());
      const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
      const peer = createConnection({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
      cleanups.push(() => void peer.destroy());
      peer.on('error', () => {});
      let acks = 0;
      peer.on('data', (d: Buffer) => (acks += ackCount(d)));
      const socket = await accepted;
      // Three times the cap: more than the cap and both ends' socket buffers hold.
      const many = Math.ceil((3 * MAX_HELD_BYTES) / SIZE);
      const h = gated(() => new SocketTransport(socket));
      const { whole } = stream(many);
      peer.write(whole);
      await until(() => h.read() >= AT_CAP, 20_000, 'the cap reached');
      await settle(50);
      expect(h.read()).toBeLessThanOrEqual(MAX_HELD_BYTES + 65_536);
      // What labgate did not read waits on the peer's side.
      expect(peer.writableLength).toBeGreaterThan(0);
      h.release();
      await until(() => acks === many, 30_000, 'every message answered');
      expect(h.ingest.messages).toHaveLength(many);
      expect(h.read()).toBe(whole.length);
      await h.runner.stop();
    });
  });
});
