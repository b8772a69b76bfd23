// The line, both ways: who the analyzer's bytes go to, when labgate bids, and contention (LIS01-A2 8.2.7).
import { describe, expect, it } from 'vitest';
import { linkConfigOf } from '../../drivers/astm/decode.js';
import type { LineEffect, LineInput, LineState } from '../../drivers/astm/line.js';
import { driveLine, isNeutral } from '../../drivers/astm/line.js';
import { initialLinkState } from '../../drivers/astm/link.js';
import { parseAstmOptions } from '../../drivers/astm/options.js';
import { initialSenderState, type Outgoing } from '../../drivers/astm/sender.js';
import { bytes, frame, mnemonic } from './mnemonics.js';

const answer: Outgoing = { id: 'answer', text: Buffer.from('H|\\^&\rL|1|I\r', 'latin1') };
const results = (acc: string): string => frame(1, `H|\\^&<CR>O|1|${acc}<CR>R|1|^^^GLU|5|||||F||||20260701100000<CR>L|1|N<CR>`);

/** A line driven through its effects: commits succeed; the trace shows writes, commits and outcomes. */
function line(): { feed: (input: LineInput | string) => string[]; state: () => LineState } {
  let state: LineState = { receiver: initialLinkState(linkConfigOf(parseAstmOptions({}))), sender: initialSenderState({ maxFrameBytes: 247 }) };
  const show = (e: LineEffect): string | null => {
    if (e.kind === 'write') return `write ${mnemonic(e.data)}`;
    if (e.kind === 'commit') return 'commit';
    if (e.kind === 'delivered' || e.kind === 'failed') return `${e.kind} ${e.id}`;
    if (e.kind === 'arm-timer') return `arm ${e.timer} ${e.ms}`;
    return null;
  };
  return {
    feed: (input) => {
      const trace: string[] = [];
      const i: LineInput = typeof input === 'string' ? { kind: 'bytes', data: bytes(input) } : input;
      state = driveLine(state, i, (e) => {
        const shown = show(e);
        if (shown) trace.push(shown);
        if (e.kind === 'commit') return { kind: 'committed', ok: true };
      });
      return trace;
    },
    state: () => state,
  };
}

const send: LineInput = { kind: 'send', message: answer };

describe('ASTM line (receiver and sender on one cable)', () => {
  it('an answer queued on a neutral line bids at once', () => {
    const l = line();
    expect(l.feed(send)).toEqual(['write <ENQ>', 'arm sender 15000']);
    expect(l.feed('<ACK>')[0]).toBe(`write ${mnemonic(bytes(frame(1, 'H|\\^&<CR>')))}`);
    l.feed('<ACK>');
    expect(l.feed('<ACK>')).toEqual(['delivered answer', 'write <EOT>']);
    expect(isNeutral(l.state())).toBe(true);
  });

  it('an answer waits while the analyzer sends; it bids when the analyzer ends its transfer (EOT)', () => {
    const l = line();
    expect(l.feed('<ENQ>')).toEqual(['write <ACK>', 'arm receiver 30000']);
    expect(l.feed(send)).toEqual([]);
    expect(l.feed(results('A1'))).toEqual(['commit', 'write <ACK>', 'arm receiver 30000']);
    expect(l.feed('<EOT>')).toEqual(['write <ENQ>', 'arm sender 15000']);
  });

  it('contention: labgate yields, the analyzer sends its results first, then labgate bids again', () => {
    const l = line();
    l.feed(send);
    // The analyzer bid at the same instant: its ENQ is the reply to ours. It is not answered (8.2.7.1).
    expect(l.feed('<ENQ>')).toEqual(['arm sender 20000']);
    // Its next ENQ, a second later, reaches the receiver.
    expect(l.feed('<ENQ>')).toEqual(['write <ACK>', 'arm receiver 30000']);
    expect(l.feed(results('A2'))).toContain('commit');
    expect(l.feed('<EOT>')).toEqual(['write <ENQ>', 'arm sender 15000']);
    expect(l.feed('<ACK>')[0]).toMatch(/^write <STX>1H/);
  });

  it('after contention with no transfer from the analyzer, labgate bids again after 20 s', () => {
    const l = line();
    l.feed(send);
    l.feed('<ENQ>');
    expect(l.feed({ kind: 'timeout', timer: 'sender' })).toEqual(['write <ENQ>', 'arm sender 15000']);
  });

  it("bytes after the sender's last reply go to the receiver", () => {
    const l = line();
    l.feed(send);
    l.feed('<ACK>');
    l.feed('<ACK>');
    expect(l.feed('<ACK><ENQ>')).toEqual(['delivered answer', 'write <EOT>', 'write <ACK>', 'arm receiver 30000']);
    expect(l.state().receiver.phase).toBe('receiving');
  });

  it('a second answer bids right after the first one ends', () => {
    const l = line();
    l.feed(send);
    l.feed({ kind: 'send', message: { ...answer, id: 'second' } });
    l.feed('<ACK>');
    l.feed('<ACK>');
    expect(l.feed('<ACK>')).toEqual(['delivered answer', 'write <EOT>', 'write <ENQ>', 'arm sender 15000']);
  });

  it('the receiver timeout and the sender timeout are separate timers', () => {
    const l = line();
    l.feed('<ENQ>');
    l.feed(send);
    // A sender timeout while the analyzer holds the line changes nothing of its transfer.
    expect(l.feed({ kind: 'timeout', timer: 'sender' })).toEqual([]);
    expect(l.state().receiver.phase).toBe('receiving');
  });
});
