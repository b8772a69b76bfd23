// What a broken cable or a babbling analyzer may cost: bounded bytes per frame and per message, refused frames
// that count toward nothing, a receive timer that runs from the last accepted frame, and no stale frame left
// behind by a timeout.
import { describe, expect, it } from 'vitest';
import { linkConfigOf } from '../../drivers/astm/decode.js';
import { encodeFrame } from '../../drivers/astm/frame.js';
import { CHUNK_COST, MAX_MESSAGE_BYTES } from '../../drivers/astm/inbox.js';
import { drive, heldBytes, initialLinkState, step } from '../../drivers/astm/link.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { options, profile } from './profile.js';

const ACK = 'write 6';
const NAK = 'write 21';
const H = 'H|\\^&|||Emu<CR>';

/** A frame whose checksum is wrong (the sum of another text). */
const badFrame = (n: number, text: string): string =>
  frame(n, text)
    .replace(/(<ETX>)<CS>/, '$1')
    .replace(/<ETX>/, '<ETX>00');

describe('refused frames count toward nothing', () => {
  it('frames refused for their checksum are not journaled with the message', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(bytes('<ENQ>' + frame(1, H, false)));
    for (let i = 0; i < 5; i++) h.transport.emitData(bytes(badFrame(2, 'P|1|' + 'x'.repeat(200) + '<CR>')));
    h.transport.emitData(bytes(frame(2, 'L|1<CR>')));
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.capture.raw).toEqual(bytes('<ENQ>' + frame(1, H, false) + frame(2, 'L|1<CR>')));
  });

  it('a NAK does not rearm the receive timer: 30 s after the last accepted frame the transfer ends', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(bytes('<ENQ>' + frame(1, H, false)));
    // A babbling line: a refused frame every 5 s, for a minute.
    for (let t = 0; t < 60; t += 5) {
      h.clock.advance(5_000);
      h.transport.emitData(bytes(badFrame(2, 'P|1<CR>')));
    }
    expect(h.events).toContainEqual({ kind: 'discarded', reason: 'receiver timeout (30 s)' });
    // Back in neutral: frames are ignored until the next ENQ.
    const writes = h.trace.length;
    h.transport.emitData(bytes(frame(2, 'P|1<CR>')));
    expect(h.trace.length).toBe(writes);
  });
});

describe('bounded frames', () => {
  it('an unterminated frame is held only up to maxFrameBytes: NAKed once, the rest skipped until the next frame', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(bytes('<ENQ><STX>1'));
    const text = Buffer.alloc(64 * 1024, 0x41);
    for (let i = 0; i < 64; i++) h.transport.emitData(text);
    expect(h.trace).toEqual([ACK, NAK]);
    expect(h.events).toContainEqual({ kind: 'nak', reason: 'frame-too-long' });
    // The next real frame is read as usual.
    h.transport.emitData(bytes(frame(1, H + 'L|1<CR>')));
    expect(h.messages).toHaveLength(1);
  });

  it('the receiver never holds more of an unterminated frame than maxFrameBytes', () => {
    let state = drive(initialLinkState(linkConfigOf(options())), { kind: 'bytes', data: bytes('<ENQ><STX>1') }, () => undefined);
    const text = Buffer.alloc(1000, 0x41);
    for (let i = 0; i < 1000; i++) {
      state = drive(state, { kind: 'bytes', data: text }, () => undefined);
      expect(heldBytes(state)).toBeLessThanOrEqual(247);
    }
  });

  it('a message is discarded past 16 MiB and every frame NAKed until the sender ends the transfer', () => {
    const h = harness(profile([]), options({ maxFrameBytes: 64_000 }));
    h.transport.emitData(bytes('<ENQ>' + frame(1, H, false)));
    const text = Buffer.from('C|1|' + 'x'.repeat(63_000) + '\r', 'latin1');
    let n = 2;
    while (!h.events.some((e) => e.kind === 'discarded')) h.transport.emitData(encodeFrame(n++, text, false));
    expect(n).toBeGreaterThan(260);
    expect(h.events.filter((e) => e.kind === 'discarded')).toEqual([{ kind: 'discarded', reason: `message over ${16 * 1024 * 1024} bytes` }]);
    h.transport.emitData(Buffer.concat([encodeFrame(n - 1, text, false), bytes(frame(n, 'L|1<CR>'))]));
    expect(h.trace.slice(-2)).toEqual([NAK, NAK]);
    h.transport.emitData(bytes('<EOT><ENQ>' + frame(1, H + 'L|1<CR>')));
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.capture.raw.length).toBeLessThan(100);
  });
});

describe('after a receiver timeout', () => {
  it('a frame cut short by the timeout is dropped: an ENQ inside it is never answered later', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(bytes('<ENQ><STX>1H|\\^&|||<ENQ>'));
    h.clock.advance(30_000);
    expect(h.events).toContainEqual({ kind: 'discarded', reason: 'receiver timeout (30 s)' });
    h.transport.emitData(bytes('x'));
    expect(h.trace).toEqual([ACK]);
  });
});

describe('framing: none is bounded too', () => {
  const bare = () => initialLinkState(linkConfigOf(options({ framing: 'none' })));
  const none = (): undefined => undefined;

  it('a message that never ends is discarded past 16 MiB; its records are skipped up to its L record', () => {
    const events: string[] = [];
    const commits: Buffer[] = [];
    const record = Buffer.from('R|1|^^^X|' + 'x'.repeat(60_000) + '\r', 'latin1');
    let state = drive(bare(), { kind: 'bytes', data: Buffer.from('H|\\^&\r') }, none);
    for (let i = 0; i < 300; i++) {
      state = drive(state, { kind: 'bytes', data: record }, (e) => void (e.kind === 'event' && events.push(e.event.kind)));
      expect(heldBytes(state)).toBeLessThanOrEqual(16 * 1024 * 1024);
    }
    expect(events).toEqual(['discarded']);
    state = drive(state, { kind: 'bytes', data: Buffer.from('L|1\rH|\\^&\rL|1\r') }, (e) =>
      e.kind === 'commit' ? (commits.push(e.raw), { kind: 'committed', ok: true }) : undefined,
    );
    expect(commits.map((c) => c.toString('latin1'))).toEqual(['H|\\^&\rL|1\r']);
  });

  it('one endless line is never held beyond the cap', () => {
    let state = bare();
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    for (let i = 0; i < 40; i++) {
      state = drive(state, { kind: 'bytes', data: chunk }, none);
      expect(heldBytes(state)).toBeLessThanOrEqual(16 * 1024 * 1024);
    }
    expect(state.phase).toBe('skipping');
  });

  it('while a failed commit waits, what arrives is held up to the cap and the rest reported dropped', () => {
    const events: string[] = [];
    let ok = false;
    const perform = (e: Parameters<Parameters<typeof drive>[2]>[0]) => {
      if (e.kind === 'event') events.push(e.event.kind === 'discarded' ? e.event.reason : e.event.kind);
      return e.kind === 'commit' ? { kind: 'committed' as const, ok } : undefined;
    };
    let state = drive(bare(), { kind: 'bytes', data: Buffer.from('H|\\^&\rL|1\r') }, perform);
    expect(state.phase).toBe('retrying');
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    for (let i = 0; i < 20; i++) state = drive(state, { kind: 'bytes', data: chunk }, perform);
    expect(heldBytes(state)).toBeLessThanOrEqual(16 * 1024 * 1024 + 100);
    ok = true;
    state = drive(state, { kind: 'timeout' }, perform);
    // Fifteen chunks fit; the sixteenth would pass the cap with the chunks' CHUNK_COST, so it and the four after it are dropped.
    expect(events[0]).toBe(`${5 * 1024 * 1024} bytes dropped while a commit waited`);
  });
});

describe('bytes held a byte at a time', () => {
  it('each held chunk is charged beside its bytes: 200,000 one-byte chunks while a commit waits are not all kept', () => {
    const events: string[] = [];
    let ok = false;
    const perform = (e: Parameters<Parameters<typeof drive>[2]>[0]) => {
      if (e.kind === 'event' && e.event.kind === 'discarded') events.push(e.event.reason);
      return e.kind === 'commit' ? { kind: 'committed' as const, ok } : undefined;
    };
    let state = drive(initialLinkState(linkConfigOf(options({ framing: 'none' }))), { kind: 'bytes', data: Buffer.from('H|\\^&\rL|1\r') }, perform);
    const byte = Buffer.from('A');
    for (let i = 0; i < 200_000; i++) state = drive(state, { kind: 'bytes', data: byte }, perform);
    ok = true;
    drive(state, { kind: 'timeout' }, perform);
    const kept = Math.floor(MAX_MESSAGE_BYTES / (1 + CHUNK_COST));
    expect(events[0]).toBe(`${200_000 - kept} bytes dropped while a commit waited`);
  });
});

describe('an ENQ flood', () => {
  it('a chunk of 65,536 ENQs (or ENQs between noise) is answered once, in a handful of effects, not two a byte', () => {
    for (const unit of [[0x05], [0x05, 0x00]]) {
      const chunk = Buffer.alloc(64 * 1024, Buffer.from(unit));
      for (const accepting of [true, false]) {
        const r = step(initialLinkState(linkConfigOf(options()), accepting), { kind: 'bytes', data: chunk });
        expect(r.effects.length).toBeLessThanOrEqual(4);
        expect(r.effects.filter((e) => e.kind === 'write')).toEqual([{ kind: 'write', data: Buffer.from([accepting ? 0x06 : 0x15]) }]);
        const noise = r.effects.find((e) => e.kind === 'noise');
        expect(noise).toEqual({ kind: 'noise', bytes: chunk.length - 1 });
      }
    }
  });

  it('an ENQ after a frame or EOT in the same chunk is answered as usual', () => {
    const h = harness(profile([]), options());
    h.transport.emitData(bytes('<ENQ><ENQ>' + frame(1, H, false) + '<ENQ><EOT><ENQ>'));
    expect(h.trace).toEqual([ACK, ACK, ACK, ACK]);
  });
});
