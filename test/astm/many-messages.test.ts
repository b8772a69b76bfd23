// One chunk or one capture holding thousands of complete messages: each commit's outcome is the next input of a
// loop, never a nested call, so the stack stays flat however many messages arrive at once.
import { describe, expect, it } from 'vitest';
import { decodeAstmCapture } from '../../drivers/astm/decode.js';
import { FakeTransport } from '../../src/transport/fake.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { options, profile } from './profile.js';

/** ENQ, then `n` one-frame messages holding only an H and an L record (frame numbers counting modulo 8), then EOT. */
function tinyMessages(n: number): Buffer {
  let wire = '<ENQ>';
  for (let i = 1; i <= n; i++) wire += frame(i % 8, 'H|\\^&<CR>L<CR>');
  return bytes(wire + '<EOT>');
}

describe('thousands of messages in one chunk', () => {
  it('the runner commits each of 4,100 messages delivered as one 40 KB chunk, and answers each', () => {
    const h = harness(profile([]), options());
    const wire = tinyMessages(4_100);
    expect(wire.length).toBeGreaterThan(36_000);
    expect(() => h.transport.emitData(wire)).not.toThrow();
    expect(h.messages).toHaveLength(4_100);
    expect(h.trace.filter((t) => t === 'write 6')).toHaveLength(4_101);
    expect(h.clock.pending).toBe(0);
  });

  it('labgate decode reads a capture of 9,000 messages', () => {
    const decoded = decodeAstmCapture(tinyMessages(9_000), profile([]), options());
    expect(decoded).toHaveLength(9_000);
  });
});

describe('a transport that calls back while the runner writes', () => {
  it('an analyzer answering synchronously: inputs are taken in order after the effects before them', () => {
    const line = new FakeTransport();
    const h = harness(profile([]), options(), line);
    const script = ['<ENQ>', frame(1, 'H|\\^&<CR>', false), frame(2, 'L<CR>'), '<EOT>'].map((m) => bytes(m));
    // Each ACK makes the analyzer send its next piece from inside the gateway's write.
    line.onWrite((d) => {
      if (d[0] === 0x06) line.emitData(script.shift() ?? Buffer.alloc(0));
    });
    line.emitData(script.shift()!);
    expect(h.messages).toHaveLength(1);
    expect(h.trace).toEqual(['write 6', 'write 6', 'ingest', 'write 6']);
    // The EOT cancelled the receiver timer; no timer armed before it survives the session.
    expect(h.clock.pending).toBe(0);
  });
});
