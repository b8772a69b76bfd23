// Table-driven tests of the receiver's link state machine: {from, input, to, effects}.
import { describe, expect, it } from 'vitest';
import { linkConfigOf } from '../../drivers/astm/decode.js';
import { emptyInbox } from '../../drivers/astm/inbox.js';
import type { Committing, LinkConfig, LinkEffect, LinkInput, LinkState, Receiving } from '../../drivers/astm/link.js';
import { initialLinkState, step } from '../../drivers/astm/link.js';
import { newMessage, withFrame, type AcceptedFrame } from '../../drivers/astm/link-message.js';
import type { AstmOptionsInput } from '../../drivers/astm/options.js';
import { parseAstmOptions } from '../../drivers/astm/options.js';
import { bytes, frame, mnemonic } from './mnemonics.js';

const config = (o: AstmOptionsInput = {}): LinkConfig => linkConfigOf(parseAstmOptions(o));
const neutral = initialLinkState(config());
const H = 'H|\\^&|||emu<CR>';
const L = 'L|1|N<CR>';

interface Transfer {
  lastFrameNumber?: number | null;
  lastText?: Buffer | null;
  /** Texts of the frames of the message so far. */
  texts?: Buffer[];
  refusals?: number;
}

const accepted = (text: Buffer, frameNumber: number | null = 0, final = false): AcceptedFrame => ({ frameNumber, bytes: text, text, final });

/** A receiver between ENQ and EOT, with the transfer and message so far. */
function receiving(over: Transfer = {}, cfg: LinkConfig = config()): Receiving {
  const message = (over.texts ?? []).reduce((m, t) => withFrame(m, accepted(t)), newMessage());
  return {
    phase: 'receiving',
    config: cfg,
    accepting: true,
    lastFrameNumber: over.lastFrameNumber === undefined ? 0 : over.lastFrameNumber,
    lastText: over.lastText ?? null,
    message,
    partial: null,
    refusals: over.refusals ?? 0,
  };
}

/** A receiver whose completing frame waits for its commit outcome. */
function committing(over: Transfer, completing: AcceptedFrame): Committing {
  const r = receiving(over);
  return {
    phase: 'committing',
    config: r.config,
    accepting: true,
    lastFrameNumber: r.lastFrameNumber,
    lastText: r.lastText,
    message: r.message,
    completing,
    inbox: emptyInbox,
  };
}

/** After the sender gave up: every frame NAKed until EOT. */
const aborted: LinkState = { phase: 'aborted', config: config(), accepting: true, partial: null };

const lastFrameNumberOf = (s: LinkState): number | null | undefined => ('lastFrameNumber' in s ? s.lastFrameNumber : undefined);
const framesOf = (s: LinkState): number => ('message' in s && 'frames' in s.message ? s.message.frames : 0);

/** Effects in mnemonics, for readable tables (noise reports are tested apart). */
function show(effects: LinkEffect[]): string[] {
  return effects.flatMap((e) => {
    if (e.kind === 'noise') return [];
    if (e.kind === 'write') return [`write ${mnemonic(e.data)}`];
    if (e.kind === 'arm-timer') return [`arm ${e.ms}`];
    if (e.kind === 'cancel-timer') return ['cancel'];
    if (e.kind === 'commit') return [`commit ${mnemonic(e.text)}`];
    return [`event ${e.event.kind}${'reason' in e.event ? ` ${e.event.reason}` : ''}`];
  });
}

const b = (m: string): LinkInput => ({ kind: 'bytes', data: bytes(m) });

interface Row {
  name: string;
  from: LinkState;
  input: LinkInput;
  to: { phase?: LinkState['phase']; lastFrameNumber?: number; texts?: number };
  effects: string[];
}

const rows: Row[] = [
  {
    name: 'ENQ when accepting is ACKed (8.2)',
    from: neutral,
    input: b('<ENQ>'),
    to: { phase: 'receiving', lastFrameNumber: 0 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'ENQ while the store cannot accept is NAKed (busy)',
    from: { ...neutral, accepting: false },
    input: b('<ENQ>'),
    to: { phase: 'neutral' },
    effects: ['write <NAK>', 'event nak not accepting (store unavailable)'],
  },
  { name: 'bytes other than ENQ are ignored in neutral', from: neutral, input: b(frame(1, H)), to: { phase: 'neutral' }, effects: [] },
  {
    name: 'intermediate ETB frame is ACKed at once',
    from: receiving(),
    input: b(frame(1, H, false)),
    to: { phase: 'receiving', lastFrameNumber: 1, texts: 1 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'ETX frame without L completes nothing: ACK',
    from: receiving(),
    input: b(frame(1, H)),
    to: { lastFrameNumber: 1, texts: 1 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'frame carrying L: commit first, no ACK yet',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)] }),
    input: b(frame(2, L)),
    to: { phase: 'committing', lastFrameNumber: 1 },
    effects: ['cancel', `commit ${H.replace(/<CR>/g, '\r')}${L.replace(/<CR>/g, '\r')}`.replace(/\r/g, '<CR>')],
  },
  {
    name: 'commit ok: ACK the completing frame',
    from: committing({ lastFrameNumber: 1 }, accepted(bytes(L), 2, true)),
    input: { kind: 'committed', ok: true },
    to: { phase: 'receiving', lastFrameNumber: 2, texts: 0 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'commit failed: NAK, the analyzer keeps the message',
    from: committing({ lastFrameNumber: 1, texts: [bytes(H)] }, accepted(bytes(L), 2, true)),
    input: { kind: 'committed', ok: false },
    to: { phase: 'receiving', lastFrameNumber: 1, texts: 1 },
    effects: ['write <NAK>', 'arm 30000', 'event nak commit failed'],
  },
  {
    name: 'bad checksum is NAKed (8.3.3)',
    from: receiving(),
    input: b('<STX>1H|\\^&<CR><ETX>00<CR><LF>'),
    to: { lastFrameNumber: 0, texts: 0 },
    effects: ['event checksum-error', 'write <NAK>', 'event nak checksum'],
  },
  {
    name: 'lower-case checksum accepted by default',
    from: receiving(),
    input: b('<STX>1H|\\^&<CR><ETB>f9<CR><LF>'),
    to: { lastFrameNumber: 1 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'repeated frame number: retransmission after a lost ACK, ACK and discard (8.3.4)',
    from: receiving({ lastFrameNumber: 1, lastText: bytes(H), texts: [bytes(H)] }),
    input: b(frame(1, H)),
    to: { lastFrameNumber: 1, texts: 1 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'the last frame number with other text is no retransmission: NAK',
    from: receiving({ lastFrameNumber: 1, lastText: bytes(H), texts: [bytes(H)] }),
    input: b(frame(1, 'P|1<CR>')),
    to: { lastFrameNumber: 1, texts: 1 },
    effects: ['write <NAK>', 'event nak frame-number'],
  },
  {
    name: 'the 7th refusal in a row discards: the sender has aborted (8.5.1)',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)], refusals: 6 }),
    input: b(frame(3, 'P|1<CR>')),
    to: { phase: 'aborted', texts: 0 },
    effects: ['write <NAK>', 'event nak frame-number', 'event discarded 7 frames refused in a row'],
  },
  {
    name: 'after that, even the expected number is NAKed until EOT',
    from: aborted,
    input: b(frame(2, 'P|1<CR>')),
    to: { phase: 'aborted' },
    effects: ['write <NAK>', 'event nak sender gave up; waiting for EOT'],
  },
  {
    name: 'any other frame number is NAKed (8.3.2)',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)] }),
    input: b(frame(3, 'P|1<CR>')),
    to: { lastFrameNumber: 1, texts: 1 },
    effects: ['write <NAK>', 'event nak frame-number'],
  },
  {
    name: 'frame numbers wrap 7 → 0',
    from: receiving({ lastFrameNumber: 7 }),
    input: b(frame(0, 'R|1<CR>', false)),
    to: { lastFrameNumber: 0 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'frame over 247 bytes is NAKed',
    from: receiving(),
    input: b(frame(1, 'R'.repeat(241), false)),
    to: { lastFrameNumber: 0 },
    effects: ['write <NAK>', 'event nak frame-too-long'],
  },
  {
    name: 'a 240-character text is within 247',
    from: receiving(),
    input: b(frame(1, 'R'.repeat(240), false)),
    to: { lastFrameNumber: 1 },
    effects: ['write <ACK>', 'arm 30000'],
  },
  {
    name: 'restricted character in the text is NAKed (8.6)',
    from: receiving(),
    input: b(frame(1, 'R|1<ACK>x<CR>', false)),
    to: { lastFrameNumber: 0 },
    effects: ['write <NAK>', 'event nak restricted-character'],
  },
  {
    name: 'LF-only trailer is a framing error by default',
    from: receiving(),
    input: b('<STX>1H|\\^&<CR><ETB>F9<LF>'),
    to: { lastFrameNumber: 0 },
    effects: ['write <NAK>', 'event nak framing'],
  },
  { name: 'EOT ends the transfer', from: receiving({ lastFrameNumber: 3 }), input: b('<EOT>'), to: { phase: 'neutral' }, effects: ['cancel'] },
  {
    name: 'EOT before L discards the incomplete message',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)] }),
    input: b('<EOT>'),
    to: { phase: 'neutral', texts: 0 },
    effects: ['cancel', 'event discarded EOT before the L terminator record'],
  },
  {
    name: 'receiver timeout (30 s) discards and returns to neutral (8.5.2)',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)] }),
    input: { kind: 'timeout' },
    to: { phase: 'neutral', texts: 0 },
    effects: ['cancel', 'event discarded receiver timeout (30 s)'],
  },
  { name: 'timeout in neutral does nothing', from: neutral, input: { kind: 'timeout' }, to: { phase: 'neutral' }, effects: [] },
  { name: 'partial frame waits for more bytes', from: receiving(), input: b('<STX>1H|\\^&'), to: { lastFrameNumber: 0 }, effects: [] },
  {
    name: 'ENQ during a message re-establishes and discards',
    from: receiving({ lastFrameNumber: 1, texts: [bytes(H)] }),
    input: b('<ENQ>'),
    to: { phase: 'receiving', lastFrameNumber: 0, texts: 0 },
    effects: ['cancel', 'event discarded ENQ before the L terminator record', 'write <ACK>', 'arm 30000'],
  },
];

describe('ASTM link layer (LIS01-A2 receiver)', () => {
  it.each(rows)('$name', ({ from, input, to, effects }) => {
    const r = step(from, input);
    expect(show(r.effects)).toEqual(effects);
    if (to.phase) expect(r.state.phase).toBe(to.phase);
    if (to.lastFrameNumber !== undefined) expect(lastFrameNumberOf(r.state)).toBe(to.lastFrameNumber);
    if (to.texts !== undefined) expect(framesOf(r.state)).toBe(to.texts);
  });

  it('bytes arriving while a commit is pending are processed after the outcome', () => {
    let s = step(receiving({ lastFrameNumber: 1, texts: [bytes(H)] }), b(frame(2, L) + '<EOT>')).state;
    expect(s.phase).toBe('committing');
    const r = step(s, { kind: 'committed', ok: true });
    s = r.state;
    expect(show(r.effects)).toEqual(['write <ACK>', 'arm 30000', 'cancel']);
    expect(s.phase).toBe('neutral');
  });

  it('a frame split across many chunks is reassembled byte by byte', () => {
    let s: LinkState = receiving();
    const all: LinkEffect[] = [];
    for (const byte of bytes(frame(1, H + L))) {
      const r = step(s, { kind: 'bytes', data: Buffer.from([byte]) });
      s = r.state;
      all.push(...r.effects);
    }
    expect(show(all)).toEqual(['cancel', 'commit H|\\^&|||emu<CR>L|1|N<CR>']);
  });

  it('the raw capture of a message holds exactly its bytes from ENQ', () => {
    const wire = bytes('<ENQ>' + frame(1, H, false) + frame(2, L));
    const r = step(neutral, { kind: 'bytes', data: wire });
    const commit = r.effects.find((e) => e.kind === 'commit');
    expect(commit && commit.kind === 'commit' ? commit.raw : null).toEqual(wire);
  });

  describe('deviations, each opt-in', () => {
    const dev = (d: NonNullable<AstmOptionsInput['deviations']>, over: Transfer = {}): LinkState => receiving(over, config({ deviations: d }));
    it.each([
      { name: 'LF-only trailer', from: dev({ trailers: ['CRLF', 'LF'] }), wire: '<STX>1H|\\^&<CR><ETB>F9<LF>', ok: true },
      { name: 'CR-only trailer', from: dev({ trailers: ['CR'] }), wire: '<STX>1H|\\^&<CR><ETB>F9<CR>', ok: true },
      { name: 'missing checksum', from: dev({ missingChecksum: true }), wire: '<STX>1H|<CR><ETB><CR><LF>', ok: true },
      { name: 'missing checksum refused by default', from: receiving(), wire: '<STX>1H|<CR><ETB><CR><LF>', ok: false },
      { name: 'lower-case checksum refused when turned off', from: dev({ lowerCaseChecksum: false }), wire: '<STX>1H|\\^&<CR><ETB>f9<CR><LF>', ok: false },
    ])('$name', ({ from, wire, ok }) => {
      expect(show(step(from, b(wire)).effects)[0]).toBe(ok ? 'write <ACK>' : show(step(from, b(wire)).effects)[0]);
      if (!ok) expect(show(step(from, b(wire)).effects)).toContain('write <NAK>');
    });

    it('restart-at-1 accepts 1 after 7, standard does not', () => {
      const at7 = { lastFrameNumber: 7, lastText: bytes('x') };
      expect(show(step(dev({ frameNumbers: 'restart-at-1' }, at7), b(frame(1, 'R|<CR>', false))).effects)).toEqual(['write <ACK>', 'arm 30000']);
      expect(show(step(receiving(at7), b(frame(1, 'R|<CR>', false))).effects)).toContain('write <NAK>');
    });

    it('any: a repeated number with new text is a new frame, with the same text a retransmission', () => {
      const s = dev({ frameNumbers: 'any' }, { lastFrameNumber: 1, lastText: bytes('M|1<CR>'), texts: [bytes(H), bytes('M|1<CR>')] });
      expect(framesOf(step(s, b(frame(1, 'M|2<CR>'))).state)).toBe(3);
      expect(framesOf(step(s, b(frame(1, 'M|1<CR>'))).state)).toBe(2);
    });
  });
});

describe('framing: none (bare records)', () => {
  const bare = initialLinkState(config({ framing: 'none' }));
  const feed = (s: LinkState, m: string) => step(s, b(m));

  it('commits at the L record, whatever the line ends, and writes nothing', () => {
    for (const eol of ['<CR>', '<LF>', '<CR><LF>']) {
      const r = feed(bare, `H|\\^&${eol}R|1|^^^X|1${eol}L${eol}`);
      expect(show(r.effects)).toEqual(['cancel', `commit H|\\^&${eol}R|1|^^^X|1${eol}L${eol}`]);
    }
  });

  it('reads the field delimiter from the header', () => {
    expect(show(feed(bare, 'H!\\^&<CR>L!1<CR>').effects)[1]).toMatch(/^commit/);
    expect(show(feed(bare, 'H!\\^&<CR>L|1<CR>').effects)).toEqual(['arm 30000']);
  });

  it('30 s of silence commits what arrived (there is no retransmission to wait for)', () => {
    const s = feed(bare, 'H|\\^&<CR>R|1|^^^X|1<CR>').state;
    expect(show(step(s, { kind: 'timeout' }).effects)).toEqual(['cancel', 'commit H|\\^&<CR>R|1|^^^X|1<CR>']);
  });

  it('a failed commit is retried every 5 s until it succeeds', () => {
    let s = feed(bare, 'H|\\^&<CR>L<CR>').state;
    let r = step(s, { kind: 'committed', ok: false });
    expect(show(r.effects)).toEqual(['arm 5000']);
    s = step(r.state, b('H|\\^&<CR>')).state;
    r = step(s, { kind: 'timeout' });
    expect(show(r.effects)).toEqual(['cancel', 'commit H|\\^&<CR>L<CR>']);
    r = step(r.state, { kind: 'committed', ok: true });
    expect(r.state.phase).toBe('receiving');
    expect(show(step(r.state, b('L<CR>')).effects)).toEqual(['cancel', 'commit H|\\^&<CR>L<CR>']);
  });

  it('blank lines between messages are not a message', () => {
    expect(show(step(feed(bare, '<CR><LF><CR><LF>').state, { kind: 'timeout' }).effects)).toEqual([]);
  });
});
