// The runner and the emulator back to back: durable before ACK, busy NAK, timeouts and injected faults.
import { describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import type { InboundMessage } from '../../src/message.js';
import { FakeTransport } from '../../src/transport/fake.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { transportPair } from './pair.js';
import { options, profile } from './profile.js';

const mapping = [
  { code: 'GLU', loinc: '2345-7', unit: 'mmol/L' },
  { code: 'NA', loinc: '2951-2', unit: 'mmol/L' },
];
const p = profile(mapping);
const message = (accession: string, n = 2): string =>
  [
    'H|\\^&|||Emu^1|||||||P|1|20260701120000',
    'P|1',
    `O|1|${accession}`,
    ...Array.from({ length: n }, (_, i) => `R|${i + 1}|^^^${i % 2 ? 'NA' : 'GLU'}|${5 + i}|mmol/L||N||F||||2026070111${String(i % 60).padStart(2, '0')}00`),
    'L|1|N',
  ].join('\r') + '\r';
const ACK = 'write 6';
const NAK = 'write 21';

function setup(emulatorOptions: ConstructorParameters<typeof AstmEmulator>[2] = {}) {
  const { analyzer, gateway } = transportPair();
  const h = harness(p, options(), gateway);
  const emulator = new AstmEmulator(analyzer, h.clock, emulatorOptions);
  return { h, emulator, analyzer };
}

const keys = (ms: InboundMessage[]): string[] => ms.flatMap((m) => m.results.map((r) => `${r.accession}/${r.analyteLoinc}/${r.valueText}`));

describe('ASTM runner with the analyzer emulator', () => {
  it('delivers a message; the completing frame is ACKed only after the commit', async () => {
    const { h, emulator } = setup();
    const outcome = await h.clock.run(emulator.send([message('A1')]));
    expect(outcome).toMatchObject({ kind: 'sent', frames: 1, retransmissions: 0, restarts: 0 });
    expect(keys(h.messages)).toEqual(['A1/2345-7/5', 'A1/2951-2/6']);
    expect(h.trace).toEqual([ACK, 'ingest', ACK]);
    expect(h.events.map((e) => e.kind)).toEqual(['bytes', 'bytes', 'message', 'bytes']);
  });

  it('splits a long message at 240 characters with ETB and reassembles it', async () => {
    const { h, emulator, analyzer } = setup();
    const frames: Buffer[] = [];
    analyzer.onWrite((d) => frames.push(d));
    await h.clock.run(emulator.send([message('A2', 12)]));
    const stx = frames.filter((f) => f[0] === 2);
    expect(stx.length).toBeGreaterThan(1);
    expect(stx.slice(0, -1).every((f) => f.length === 247 && f[f.length - 5] === 0x17)).toBe(true);
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.results).toHaveLength(12);
  });

  it('commit failure: NAK, the analyzer keeps the message and retransmits; committed once it succeeds', async () => {
    const { h, emulator } = setup();
    let failures = 2;
    h.setIngest((m) => {
      if (failures-- > 0) return { kind: 'unavailable', reason: 'disk full' };
      h.messages.push(m);
      return { kind: 'committed', summary: { captureId: 1, inserted: 2, absorbed: 0, conflicts: 0, rejected: 0 }, rejections: [] };
    });
    const outcome = await h.clock.run(emulator.send([message('A3')]));
    expect(outcome).toMatchObject({ kind: 'sent', retransmissions: 2 });
    expect(h.trace).toEqual([ACK, 'ingest', NAK, 'ingest', NAK, 'ingest', ACK]);
    expect(keys(h.messages)).toEqual(['A3/2345-7/5', 'A3/2951-2/6']);
    expect(h.events.filter((e) => e.kind === 'commit-failed')).toHaveLength(2);
  });

  it('a store that stays down: 7 NAKs, the analyzer aborts and nothing was ACKed', async () => {
    const { h, emulator } = setup();
    h.setIngest(() => ({ kind: 'unavailable', reason: 'I/O error' }));
    const outcome = await h.clock.run(emulator.send([message('A4')]));
    expect(outcome).toMatchObject({ kind: 'aborted', reason: 'frame 0 refused 7 times' });
    expect(h.trace.filter((t) => t === 'ingest')).toHaveLength(7);
    expect(h.trace.slice(1).every((t) => t !== ACK)).toBe(true);
  });

  it('ENQ is NAKed while the store cannot accept; the analyzer retries after 10 s', async () => {
    const { h, emulator } = setup();
    h.setAccepting(false);
    h.clock.setTimeout(() => h.setAccepting(true), 25_000);
    const start = h.clock.now();
    const outcome = await h.clock.run(emulator.send([message('A5')]));
    expect(outcome.kind).toBe('sent');
    expect(h.clock.now() - start).toBe(30_000);
    expect(h.trace.slice(0, 3)).toEqual([NAK, NAK, NAK]);
    expect(h.messages).toHaveLength(1);
  });

  it('a corrupted checksum is NAKed and the retransmission accepted', async () => {
    const { h, emulator } = setup({ faults: { corruptChecksum: [0] } });
    const outcome = await h.clock.run(emulator.send([message('A6')]));
    expect(outcome).toMatchObject({ kind: 'sent', retransmissions: 1 });
    expect(h.events.filter((e) => e.kind === 'checksum-error')).toHaveLength(1);
    expect(h.messages).toHaveLength(1);
  });

  it('a duplicate frame (same frame number) is ACKed and discarded', async () => {
    const { h, emulator } = setup({ maxFrameBytes: 64, faults: { duplicateFrame: [0, 1] } });
    await h.clock.run(emulator.send([message('A7')]));
    expect(keys(h.messages)).toEqual(['A7/2345-7/5', 'A7/2951-2/6']);
    expect(h.events.filter((e) => e.kind === 'nak')).toEqual([]);
  });

  it('a lost ACK on the completing frame: the analyzer resends the session; the message is committed again (the store absorbs the replay)', async () => {
    const { h, emulator } = setup({ faults: { dropAck: [0] } });
    const outcome = await h.clock.run(emulator.send([message('A8')]));
    expect(outcome).toMatchObject({ kind: 'sent', restarts: 1 });
    expect(h.messages).toHaveLength(2);
    expect(keys([h.messages[0]!])).toEqual(keys([h.messages[1]!]));
  });

  it('a lost ACK on an intermediate frame: the partial message is discarded at EOT, the resend is committed once', async () => {
    const { h, emulator } = setup({ maxFrameBytes: 64, faults: { dropAck: [1] } });
    await h.clock.run(emulator.send([message('A9')]));
    expect(h.messages).toHaveLength(1);
    expect(h.events.filter((e) => e.kind === 'discarded')).toHaveLength(1);
  });

  it('a pause over 30 s mid-message: the receiver discards, the analyzer times out and resends', async () => {
    const { h, emulator } = setup({ maxFrameBytes: 64, faults: { pause: [{ beforeFrame: 2, ms: 31_000 }] } });
    const outcome = await h.clock.run(emulator.send([message('B1')]));
    expect(outcome).toMatchObject({ kind: 'sent', restarts: 1 });
    expect(h.events).toContainEqual({ kind: 'discarded', reason: 'receiver timeout (30 s)' });
    expect(h.messages).toHaveLength(1);
  });

  it('several messages in one session, frame numbers continuing modulo 8', async () => {
    const { h, emulator } = setup({ maxFrameBytes: 40 });
    const outcome = await h.clock.run(emulator.send([message('C1'), message('C2'), message('C3')]));
    expect(outcome.kind).toBe('sent');
    expect(h.messages.map((m) => m.results[0]!.accession)).toEqual(['C1', 'C2', 'C3']);
  });

  it('contention: an ENQ answered with ENQ makes the instrument wait 1 s and ENQ again (LIS01-A2 8.2.7)', async () => {
    const line = new FakeTransport();
    const { ManualClock } = await import('../fixtures/manual-clock.js');
    const clock = new ManualClock();
    const emulator = new AstmEmulator(line, clock, {});
    const replies = [0x05, 0x06, 0x06];
    line.onWrite(() => {
      const r = replies.shift();
      if (r !== undefined) queueMicrotask(() => line.emitData(Buffer.from([r])));
    });
    const start = clock.now();
    await clock.run(emulator.send([message('D1')]));
    expect(line.written.slice(0, 2).map((b) => b[0])).toEqual([0x05, 0x05]);
    expect(clock.now() - start).toBe(1_000);
  });

  it('the receiver timer is cancelled when the transfer ends and nothing fires later', () => {
    const h = harness(p, options());
    h.transport.emitData(bytes('<ENQ>' + frame(1, 'H|\\^&<CR>L|1<CR>') + '<EOT>'));
    expect(h.clock.pending).toBe(0);
  });
});

describe('ASTM runner lifecycle', () => {
  it('stop(): nothing is read afterwards and no timer is left', async () => {
    const h = harness(p, options());
    h.transport.emitData(bytes('<ENQ>'));
    expect(h.clock.pending).toBe(1);
    await h.stop();
    expect(h.clock.pending).toBe(0);
    h.transport.emitData(bytes('<ENQ>'));
    expect(h.trace).toEqual([ACK]);
  });

  it('a closed transport cancels the receiver timer', () => {
    const h = harness(p, options());
    h.transport.emitData(bytes('<ENQ>'));
    h.transport.disconnect();
    expect(h.clock.pending).toBe(0);
  });

  it('the store turning unable mid-session: the completing frame is NAKed, the next ENQ too', () => {
    const h = harness(p, options());
    h.transport.emitData(bytes('<ENQ>' + frame(1, 'H|\\^&<CR>', false)));
    h.setIngest(() => ({ kind: 'unavailable', reason: 'disk floor reached' }));
    h.transport.emitData(bytes(frame(2, 'L|1<CR>')));
    h.setAccepting(false);
    h.transport.emitData(bytes('<EOT><ENQ>'));
    expect(h.trace).toEqual([ACK, ACK, 'ingest', NAK, NAK]);
  });

  it('a message whose results are all rejected (here: a misconfigured zone) is still committed raw (invariant 2)', () => {
    const h = harness(profile([], { timezone: 'Not/AZone' }), options());
    h.transport.emitData(bytes('<ENQ>' + frame(1, 'H|\\^&<CR>O|1|A<CR>R|1|^^^X|1||||F||||20260101000000<CR>L|1<CR>')));
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.capture.raw.length).toBeGreaterThan(0);
    expect(h.messages[0]!.results).toEqual([]);
    expect(h.messages[0]!.rejections[0]!.reason).toMatch(/unknown time zone/);
    expect(h.trace.at(-1)).toBe(ACK);
  });
});
