// Table-driven tests of the sender's state machine (LIS01-A2 as the computer system): {from, input, to, effects}.
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../drivers/astm/frame.js';
import type { Outgoing, SenderEffect, SenderInput, SenderState } from '../../drivers/astm/sender.js';
import { framesOf, initialSenderState, senderStep } from '../../drivers/astm/sender.js';
import { bytes, frame, mnemonic } from './mnemonics.js';

const config = { maxFrameBytes: 247 };
const A: Outgoing = { id: 'a', text: Buffer.from('H|\\^&\rL|1|N\r', 'latin1') };
const B: Outgoing = { id: 'b', text: Buffer.from('H|\\^&\rL|1|I\r', 'latin1') };
const framesA = framesOf(A.text, 247);

const idle = (queue: Outgoing[] = [A], bids = 0): SenderState => ({ phase: 'idle', config, queue, bids });
const bidding = (bids = 0, queue: Outgoing[] = [A]): SenderState => ({ phase: 'bidding', config, queue, bids });
const transferring = (index: number, retransmissions = 0, queue: Outgoing[] = [A]): SenderState => ({
  phase: 'transferring',
  config,
  queue,
  frames: framesA,
  index,
  retransmissions,
});
const waiting = (reason: 'busy' | 'contention', bids = 1): SenderState => ({ phase: 'waiting', config, queue: [A], reason, bids });

const reply = (m: string): SenderInput => ({ kind: 'reply', byte: bytes(m)[0]! });

function show(effects: SenderEffect[]): string[] {
  return effects.map((e) => {
    if (e.kind === 'write') return `write ${mnemonic(e.data)}`;
    if (e.kind === 'arm-timer') return `arm ${e.ms}`;
    if (e.kind === 'cancel-timer') return 'cancel';
    if (e.kind === 'delivered') return `delivered ${e.id}`;
    return `failed ${e.id}: ${e.reason}`;
  });
}

interface Row {
  name: string;
  from: SenderState;
  input: SenderInput;
  to: Partial<{ phase: SenderState['phase']; index: number; retransmissions: number; bids: number; queue: string[]; reason: string }>;
  effects: string[];
}

const H = 'H|\\^&<CR>';
/** A frame as show() prints it, with its real checksum. */
const wire = (n: number, text: string): string => mnemonic(bytes(frame(n, text)));
const L = 'L|1|N<CR>';

const rows: Row[] = [
  {
    name: 'a queued message waits for the line',
    from: initialSenderState(config),
    input: { kind: 'send', message: A },
    to: { phase: 'idle', queue: ['a'] },
    effects: [],
  },
  {
    name: 'the line free: ENQ and the 15 s reply timer (8.2.1)',
    from: idle(),
    input: { kind: 'bid' },
    to: { phase: 'bidding' },
    effects: ['write <ENQ>', 'arm 15000'],
  },
  { name: 'nothing queued: no bid', from: idle([]), input: { kind: 'bid' }, to: { phase: 'idle' }, effects: [] },
  {
    name: 'ACK to ENQ: the first frame (8.3)',
    from: bidding(),
    input: reply('<ACK>'),
    to: { phase: 'transferring', index: 0 },
    effects: [`write ${wire(1, H)}`, 'arm 15000'],
  },
  {
    name: 'NAK to ENQ: busy, wait 10 s (8.2.3)',
    from: bidding(),
    input: reply('<NAK>'),
    to: { phase: 'waiting', reason: 'busy', bids: 1 },
    effects: ['arm 10000'],
  },
  {
    name: 'ENQ to ENQ: contention, the instrument has priority; not answered (8.2.7.1)',
    from: bidding(),
    input: reply('<ENQ>'),
    to: { phase: 'waiting', reason: 'contention' },
    effects: ['arm 20000'],
  },
  { name: 'noise while bidding is no reply', from: bidding(), input: reply('x'), to: { phase: 'bidding' }, effects: [] },
  {
    name: 'no reply to ENQ within 15 s: EOT, given up (8.5.2)',
    from: bidding(),
    input: { kind: 'timeout' },
    to: { phase: 'idle', queue: [] },
    effects: ['cancel', 'failed a: no reply to ENQ within 15 s', 'write <EOT>'],
  },
  {
    name: 'busy six times: given up without EOT',
    from: bidding(5),
    input: reply('<NAK>'),
    to: { phase: 'idle', queue: [] },
    effects: ['cancel', 'failed a: the analyzer answered busy 6 times'],
  },
  { name: 'the busy wait ends: idle, bid count kept', from: waiting('busy', 2), input: { kind: 'timeout' }, to: { phase: 'idle', bids: 2 }, effects: [] },
  { name: 'a busy wait is not cut short by the line', from: waiting('busy'), input: { kind: 'line-free' }, to: { phase: 'waiting' }, effects: [] },
  {
    name: 'the instrument ended its transfer: contention wait over',
    from: waiting('contention', 0),
    input: { kind: 'line-free' },
    to: { phase: 'idle' },
    effects: ['cancel'],
  },
  { name: 'no bid while waiting', from: waiting('contention', 0), input: { kind: 'bid' }, to: { phase: 'waiting' }, effects: [] },
  {
    name: 'ACK to a frame: the next frame',
    from: transferring(0),
    input: reply('<ACK>'),
    to: { phase: 'transferring', index: 1, retransmissions: 0 },
    effects: [`write ${wire(2, L)}`, 'arm 15000'],
  },
  {
    name: 'EOT to a frame is an ACK with a request to stop (8.3.5)',
    from: transferring(0),
    input: reply('<EOT>'),
    to: { phase: 'transferring', index: 1 },
    effects: [`write ${wire(2, L)}`, 'arm 15000'],
  },
  {
    name: 'ACK to the last frame: delivered, EOT (8.4)',
    from: transferring(1),
    input: reply('<ACK>'),
    to: { phase: 'idle', queue: [] },
    effects: ['cancel', 'delivered a', 'write <EOT>'],
  },
  {
    name: 'NAK: the same frame again (8.5.1.1)',
    from: transferring(1, 2),
    input: reply('<NAK>'),
    to: { phase: 'transferring', index: 1, retransmissions: 3 },
    effects: [`write ${wire(2, L)}`, 'arm 15000'],
  },
  {
    name: 'any other character is a NAK',
    from: transferring(0),
    input: reply('x'),
    to: { index: 0, retransmissions: 1 },
    effects: [`write ${wire(1, H)}`, 'arm 15000'],
  },
  {
    name: 'an ENQ during a transfer is a NAK too',
    from: transferring(0),
    input: reply('<ENQ>'),
    to: { index: 0, retransmissions: 1 },
    effects: [`write ${wire(1, H)}`, 'arm 15000'],
  },
  {
    name: 'the 7th refusal aborts: EOT (8.5.1.2)',
    from: transferring(1, 6),
    input: reply('<NAK>'),
    to: { phase: 'idle', queue: [] },
    effects: ['cancel', 'failed a: frame 2 refused 7 times', 'write <EOT>'],
  },
  {
    name: 'no reply to a frame within 15 s: EOT (8.5.2)',
    from: transferring(0),
    input: { kind: 'timeout' },
    to: { phase: 'idle', queue: [] },
    effects: ['cancel', 'failed a: no reply to frame 1 within 15 s', 'write <EOT>'],
  },
  {
    name: 'the next message waits behind the first',
    from: transferring(1, 0, [A, B]),
    input: reply('<ACK>'),
    to: { phase: 'idle', queue: ['b'] },
    effects: ['cancel', 'delivered a', 'write <EOT>'],
  },
  {
    name: 'a message not started is cancelled, and said so',
    from: idle([A, B]),
    input: { kind: 'cancel', id: 'b', reason: 'late' },
    to: { queue: ['a'] },
    effects: ['failed b: late'],
  },
  {
    name: 'a message being sent is not cancelled',
    from: transferring(0),
    input: { kind: 'cancel', id: 'a', reason: 'late' },
    to: { phase: 'transferring', queue: ['a'] },
    effects: [],
  },
  {
    name: 'cancelling the message a wait was for ends the wait',
    from: waiting('busy'),
    input: { kind: 'cancel', id: 'a', reason: 'late' },
    to: { phase: 'idle', queue: [], bids: 0 },
    effects: ['failed a: late', 'cancel'],
  },
  { name: 'a timeout while idle does nothing', from: idle(), input: { kind: 'timeout' }, to: { phase: 'idle' }, effects: [] },
];

describe('ASTM sender (LIS01-A2, labgate as the computer system)', () => {
  it.each(rows)('$name', ({ from, input, to, effects }) => {
    const r = senderStep(from, input);
    expect(show(r.effects)).toEqual(effects);
    const s = r.state as SenderState & Record<string, unknown>;
    if (to.phase) expect(s.phase).toBe(to.phase);
    for (const k of ['index', 'retransmissions', 'bids', 'reason'] as const) if (to[k] !== undefined) expect(s[k]).toBe(to[k]);
    if (to.queue) expect(s.queue.map((m) => m.id)).toEqual(to.queue);
  });

  it('a step leaves the given state as it was', () => {
    const from = transferring(0);
    const copy = JSON.stringify(from);
    senderStep(from, reply('<ACK>'));
    expect(JSON.stringify(from)).toBe(copy);
  });

  it('frames: one record per ETX frame, a long record split with ETB at the size limit, numbers modulo 8', () => {
    const long = 'R|1|' + 'x'.repeat(300);
    const text = Buffer.from(['H|\\^&', long, 'P|1', 'O|1', 'O|2', 'O|3', 'O|4', 'L|1|N'].map((r) => r + '\r').join(''), 'latin1');
    const frames = framesOf(text, 100);
    expect(frames.every((f) => f.length <= 100)).toBe(true);
    expect(frames.map((f) => f[1]! - 0x30)).toEqual([1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]);
    expect(frames.map((f) => (f[f.length - 5] === 0x03 ? 'ETX' : 'ETB'))).toEqual([
      'ETX',
      'ETB',
      'ETB',
      'ETB',
      'ETX',
      'ETX',
      'ETX',
      'ETX',
      'ETX',
      'ETX',
      'ETX',
    ]);
    // Reassembled, the frames' texts are the message exactly.
    expect(Buffer.concat(frames.map((f) => f.subarray(2, f.length - 5)))).toEqual(text);
    expect(frames[0]).toEqual(encodeFrame(1, Buffer.from('H|\\^&\r'), true));
  });

  it('a whole exchange: two busy answers, a retransmission, delivery', () => {
    let s = senderStep(initialSenderState(config), { kind: 'send', message: A }).state;
    const trace: string[] = [];
    const feed = (input: SenderInput): void => {
      const r = senderStep(s, input);
      s = r.state;
      trace.push(...show(r.effects));
    };
    feed({ kind: 'bid' });
    feed(reply('<NAK>'));
    feed({ kind: 'timeout' });
    feed({ kind: 'bid' });
    feed(reply('<NAK>'));
    expect(s).toMatchObject({ phase: 'waiting', bids: 2 });
    feed({ kind: 'timeout' });
    feed({ kind: 'bid' });
    feed(reply('<ACK>'));
    feed(reply('<NAK>'));
    feed(reply('<ACK>'));
    feed(reply('<ACK>'));
    expect(trace.filter((t) => t.startsWith('write')).map((t) => t.slice(6))).toEqual(['<ENQ>', '<ENQ>', '<ENQ>', wire(1, H), wire(1, H), wire(2, L), '<EOT>']);
    expect(trace).toContain('delivered a');
    expect(s.phase).toBe('idle');
  });
});
