// Fuzzing the ASTM receiver (the link state machine the runner drives): any wire bytes, chunking, timer expiries,
// store readiness and commit outcomes. It never throws, never holds more than its bounds, commits only messages
// made of frames whose checksums verify (for every configuration that verifies them), answers a completing frame
// only after its commit's outcome, and takes time linear in the bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linkConfigOf } from '../../drivers/astm/decode.js';
import { checksum, CR, encodeFrame, ENQ, ETB, ETX, LF, STX } from '../../drivers/astm/frame.js';
import { MAX_MESSAGE_BYTES } from '../../drivers/astm/inbox.js';
import { drive, heldBytes, initialLinkState, step, type LinkInput, type LinkState } from '../../drivers/astm/link.js';
import { parseAstmOptions, type AstmOptions, type AstmOptionsInput } from '../../drivers/astm/options.js';
import { chunked, wireArb } from './astm-wire.js';
import { expectLinear, runs } from './linear.js';

const configs: AstmOptionsInput[] = [
  {},
  { maxFrameBytes: 64 },
  { maxFrameBytes: 4096, deviations: { trailers: ['CRLF', 'LF', 'CR'] } },
  { deviations: { frameNumbers: 'any' } },
  { deviations: { frameNumbers: 'restart-at-1', lowerCaseChecksum: false } },
  { deviations: { completeAtEot: true } },
  { deviations: { missingChecksum: true } },
  { deviations: { frameFormat: 'stx-text-etx' } },
  { framing: 'none' },
];

/** What the receiver may hold at most: a message and what waits behind its commit, and one open frame. */
const bound = (o: AstmOptions): number => 2 * MAX_MESSAGE_BYTES + o.maxFrameBytes + 8;

/** True when the configuration checks every frame's checksum (the others accept frames unverified by choice). */
const verifies = (o: AstmOptions): boolean => o.framing === 'link' && !o.deviations.missingChecksum && o.deviations.frameFormat === 'standard';

const allowedInText = new Set([0x07, 0x09, 0x0b, 0x0c, CR]);

/** An independent reading of a committed message's raw bytes: its frame texts, or what is wrong with it. */
function verifiedTexts(raw: Buffer, o: AstmOptions): Buffer[] | string {
  const texts: Buffer[] = [];
  const allow = new Set(o.deviations.trailers);
  for (let i = raw[0] === ENQ ? 1 : 0; i < raw.length;) {
    if (raw[i] !== STX) return `byte ${i} is not STX`;
    let j = i + 1;
    while (j < raw.length && raw[j] !== ETX && raw[j] !== ETB) j++;
    const sent = raw.toString('latin1', j + 1, j + 3);
    if (sent.toUpperCase() !== checksum(raw.subarray(i + 1, j + 1))) return `frame at ${i}: checksum ${sent}`;
    if (!o.deviations.lowerCaseChecksum && sent !== sent.toUpperCase()) return `frame at ${i}: lower-case checksum`;
    let k = j + 3;
    if (raw[k] === CR && raw[k + 1] === LF && allow.has('CRLF')) k += 2;
    else if ((raw[k] === LF && allow.has('LF')) || (raw[k] === CR && allow.has('CR'))) k += 1;
    else return `frame at ${i}: trailer`;
    const text = raw.subarray(i + 2, j);
    if (raw[i + 1]! < 0x30 || raw[i + 1]! > 0x37) return `frame at ${i}: frame number`;
    if (text.some((b) => b < 0x20 && !allowedInText.has(b))) return `frame at ${i}: control character`;
    texts.push(text);
    i = k;
  }
  return texts;
}

type Event = { kind: 'wire'; data: Buffer; sizes: number[] } | { kind: 'timeout' } | { kind: 'accepting'; accepting: boolean };

const eventArb: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ kind: fc.constant('wire' as const), data: wireArb, sizes: fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 4 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'timeout' as const }) },
  { weight: 1, arbitrary: fc.boolean().map((accepting) => ({ kind: 'accepting' as const, accepting })) },
);

/** Feeds the events step by step, checking the invariants after every step; returns the commits. */
function receive(o: AstmOptions, events: readonly Event[], outcomes: readonly boolean[]): { raw: Buffer; text: Buffer }[] {
  let state: LinkState = initialLinkState(linkConfigOf(o));
  const commits: { raw: Buffer; text: Buffer }[] = [];
  const feed = (first: LinkInput): void => {
    for (let input: LinkInput | undefined = first; input !== undefined;) {
      const r = step(state, input);
      state = r.state;
      input = undefined;
      const at = r.effects.findIndex((e) => e.kind === 'commit');
      if (at >= 0) {
        const c = r.effects[at]!;
        if (c.kind === 'commit') commits.push({ raw: c.raw, text: c.text });
        // Durable before ACK: nothing is written after a commit until its outcome is the next input.
        expect(r.effects.slice(at + 1).some((e) => e.kind === 'write')).toBe(false);
        input = { kind: 'committed', ok: outcomes[commits.length % outcomes.length]! };
      }
      expect(heldBytes(state)).toBeLessThanOrEqual(bound(o));
    }
  };
  for (const e of events) {
    if (e.kind === 'wire') for (const chunk of chunked(e.data, e.sizes)) feed({ kind: 'bytes', data: chunk });
    else feed(e);
  }
  return commits;
}

describe('ASTM receiver under fuzzing', () => {
  it('never throws, stays within its bounds, and commits only verified frames', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...configs),
        fc.array(eventArb, { maxLength: 10 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        (input, events, outcomes) => {
          const o = parseAstmOptions(input);
          for (const c of receive(o, events, outcomes)) {
            if (!verifies(o)) continue;
            const texts = verifiedTexts(c.raw, o);
            expect(texts, 'a committed message holds only frames whose checksums verify').toBeInstanceOf(Array);
            expect(Buffer.concat(texts as Buffer[])).toEqual(c.text);
          }
        },
      ),
      { numRuns: runs(400) },
    );
  });
});

/** Drives `chunks` through a fresh receiver that commits every message; returns the state at the end. */
function through(o: AstmOptions, chunks: readonly Buffer[]): LinkState {
  let state = initialLinkState(linkConfigOf(o));
  const ok = (e: { kind: string }): LinkInput | undefined => (e.kind === 'commit' ? { kind: 'committed', ok: true } : undefined);
  for (const data of chunks) state = drive(state, { kind: 'bytes', data }, ok);
  return state;
}

const text = (n: number, fill = 'x'): Buffer => Buffer.from('C|1|' + fill.repeat(n) + '\r', 'latin1');
const bytesOf = (b: Buffer): Buffer[] => Array.from({ length: b.length }, (_, i) => b.subarray(i, i + 1));

describe('ASTM receiver: time linear in the bytes, memory bounded whatever their number', () => {
  const std = parseAstmOptions({});
  const wide = parseAstmOptions({ maxFrameBytes: 64_000 });
  const bare = parseAstmOptions({ framing: 'none' });

  it('one message of many ETX frames', () => {
    const make = (scale: number): Buffer[] => [
      Buffer.from([ENQ]),
      ...Array.from({ length: 100 * scale }, (_, i) => encodeFrame(i + 1, text(20), true)),
      encodeFrame(100 * scale + 1, Buffer.from('L|1\r'), true),
    ];
    expectLinear('ETX frames', make, (chunks) => through(std, chunks));
  });

  it('one long frame arriving a byte at a time', () => {
    const make = (scale: number): Buffer[] => [Buffer.from([ENQ]), ...bytesOf(encodeFrame(1, text(600 * scale - 10), false))];
    expectLinear('a frame byte by byte', make, (chunks) => through(wide, chunks));
  });

  it('an unterminated frame: bounded, and linear', () => {
    const make = (scale: number): Buffer[] => [Buffer.from([ENQ, STX, 0x31]), ...Array.from({ length: 40 * scale }, () => Buffer.alloc(256, 0x41))];
    expectLinear('an unterminated frame', make, (chunks) => through(std, chunks));
    expect(heldBytes(through(std, make(100)))).toBeLessThanOrEqual(std.maxFrameBytes);
  });

  it('noise between frames', () => {
    const noise = Buffer.from('garbage between frames '.repeat(3), 'latin1');
    const make = (scale: number): Buffer[] => [Buffer.from([ENQ]), ...Array.from({ length: 100 * scale }, () => noise)];
    expectLinear('noise', make, (chunks) => through(std, chunks));
    expect(heldBytes(through(std, make(100)))).toBe(1);
  });

  it('frames refused for their checksum: bounded, and linear', () => {
    const bad = Buffer.from(encodeFrame(2, text(150), false));
    bad[bad.length - 3] = bad[bad.length - 3] === 0x30 ? 0x31 : 0x30;
    const make = (scale: number): Buffer[] => [
      Buffer.from([ENQ]),
      encodeFrame(1, Buffer.from('H|\\^&\r'), false),
      ...Array.from({ length: 30 * scale }, () => bad),
    ];
    expectLinear('refused frames', make, (chunks) => through(std, chunks));
    expect(heldBytes(through(std, make(100)))).toBeLessThan(1_000);
  });

  it('thousands of messages in one chunk', () => {
    const make = (scale: number): Buffer[] => [
      Buffer.concat([Buffer.from([ENQ]), ...Array.from({ length: 50 * scale }, (_, i) => encodeFrame(i + 1, Buffer.from('H|\\^&\rL|1\r'), true))]),
    ];
    expectLinear('messages in one chunk', make, (chunks) => through(std, chunks));
  });

  it('framing none: many lines, and one endless line', () => {
    const lines = (scale: number): Buffer[] => [Buffer.from('H|\\^&\r'), ...Array.from({ length: 300 * scale }, () => text(10)), Buffer.from('L|1\r')];
    expectLinear('bare lines', lines, (chunks) => through(bare, chunks));
    const endless = (scale: number): Buffer[] => chunked(Buffer.alloc(2_000 * scale, 0x41), [7]);
    expectLinear('a bare line in 7-byte chunks', endless, (chunks) => through(bare, chunks));
  });

  it('bytes held while the first commit waits, a byte per chunk, drain in time linear in the messages', () => {
    // The first message's commit is outstanding while every other byte arrives, one per chunk; its outcome then lets
    // each held message complete and commit in turn (each outcome given at once).
    const framedOne = Buffer.concat([encodeFrame(1, Buffer.from('H|\\^&\rL|1\r'), true), Buffer.from([0x04, ENQ])]);
    const heldDrain = (o: AstmOptions, one: Buffer, first: Buffer) => (scale: number) => {
      const wire = Buffer.concat([first, ...Array.from({ length: 20 * scale }, () => one)]);
      return { o, wire, messages: 20 * scale };
    };
    const run = ({ o, wire, messages }: { o: AstmOptions; wire: Buffer; messages: number }): void => {
      let state = initialLinkState(linkConfigOf(o));
      let commits = 0;
      for (let i = 0; i < wire.length; i++) {
        const r = step(state, { kind: 'bytes', data: wire.subarray(i, i + 1) });
        state = r.state;
        commits += r.effects.filter((e) => e.kind === 'commit').length;
      }
      expect(commits).toBe(1);
      const ok = (e: { kind: string }): LinkInput | undefined => (e.kind === 'commit' ? (commits++, { kind: 'committed', ok: true }) : undefined);
      drive(state, { kind: 'committed', ok: true }, ok);
      expect(commits).toBe(messages + 1);
    };
    expectLinear('bare records held', heldDrain(bare, Buffer.from('H|\\^&\rL|1\r'), Buffer.from('H|\\^&\rL|1\r')), run);
    expectLinear('frames held', heldDrain(std, framedOne, Buffer.concat([Buffer.from([ENQ]), framedOne])), run);
  });

  it('random wire, repeated', () => {
    fc.assert(
      fc.property(wireArb, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 3 }), fc.constantFrom(...configs), (wire, sizes, input) => {
        const o = parseAstmOptions(input);
        const base = Buffer.concat(Array.from({ length: Math.ceil(2_000 / Math.max(wire.length, 1)) }, () => wire));
        expectLinear(
          'random wire',
          (scale) => chunked(Buffer.concat(Array.from({ length: scale }, () => base)), sizes),
          (chunks) => through(o, chunks),
        );
      }),
      { numRuns: runs(3, 20) },
    );
  });
});
