// ASTM input that is not a message at all (no H record anywhere: noise, another protocol on the line) is counted and
// sampled, one journaled capture per interval, never journaled one by one; its completing frame is NAKed, never
// ACKed. A message with an H record, however broken, is journaled every time.
import { describe, expect, it } from 'vitest';
import { hasHeaderRecord } from '../../drivers/astm/records.js';
import { harness } from './harness.js';
import { bytes, frame } from './mnemonics.js';
import { options, profile } from './profile.js';

const ACK = 'write 6';
const NAK = 'write 21';

describe('ASTM junk', () => {
  it('framed text without an H record: NAKed, counted every time, journaled once a minute', async () => {
    const h = harness(profile([]), options());
    for (let i = 0; i < 5; i++) h.transport.emitData(bytes(`<ENQ>${frame(1, `GET / HTTP/1.1 ${i}<CR>L|1<CR>`)}<EOT>`));
    expect(h.trace.filter((t) => t !== 'ingest')).toEqual(Array.from({ length: 5 }, () => [ACK, NAK]).flat());
    expect(h.messages).toHaveLength(1);
    expect(h.messages[0]!.rejections).toEqual([{ reason: 'not an ASTM message: no H header record' }]);
    expect(h.events.filter((e) => e.kind === 'discarded')).toHaveLength(5);
    h.clock.advance(60_000);
    h.transport.emitData(bytes(`<ENQ>${frame(1, 'GET / HTTP/1.1<CR>L|1<CR>')}<EOT>`));
    expect(h.messages).toHaveLength(2);
    expect(h.messages[1]!.rejections[0]!.reason).toMatch(/; 4 more inputs like it since the last sample were counted, not kept$/);
    await h.stop();
  });

  it('a message with an H record, however broken, is journaled and ACKed every time', async () => {
    const h = harness(profile([]), options());
    for (let i = 0; i < 3; i++) h.transport.emitData(bytes(`<ENQ>${frame(1, 'R|1|^^^GLU|5<CR>H|\\\\^&<CR>L<CR>')}<EOT>`));
    expect(h.messages).toHaveLength(3);
    expect(h.trace.filter((t) => t !== 'ingest')).toEqual(Array.from({ length: 3 }, () => [ACK, ACK]).flat());
    await h.stop();
  });

  it('junk that EOT completed (no frame left to answer) is dropped once counted, never retried', async () => {
    const h = harness(profile([]), options({ deviations: { completeAtEot: true } }));
    h.transport.emitData(bytes(`<ENQ>${frame(1, 'noise<CR>')}<EOT>`));
    h.clock.advance(60_000);
    h.transport.emitData(bytes('<ENQ>'));
    expect(h.messages).toHaveLength(1);
    expect(h.trace.filter((t) => t !== 'ingest')).toEqual([ACK, ACK, ACK]);
    await h.stop();
  });

  it('bare records: junk is dropped once counted, never retried', async () => {
    const h = harness(profile([]), options({ framing: 'none' }));
    h.transport.emitData(bytes('hello<CR>L|1<CR>'));
    h.transport.emitData(bytes('again<CR>L|1<CR>'));
    h.clock.advance(60_000);
    expect(h.messages).toHaveLength(1);
    expect(h.events.filter((e) => e.kind === 'discarded')).toHaveLength(2);
    expect(h.clock.pending).toBe(0);
    await h.stop();
  });

  it('hasHeaderRecord: an H and a delimiter at the start of any line, after blanks', () => {
    const yes = ['H|\\^&', 'R|1\rH|\\^&', '  \r\n \tH^x', 'x\nH|'];
    const no = ['', 'HELLO', 'H', 'R|1|H|', ' H 1', 'xH|'];
    expect(yes.map((t) => hasHeaderRecord(Buffer.from(t)))).toEqual(yes.map(() => true));
    expect(no.map((t) => hasHeaderRecord(Buffer.from(t)))).toEqual(no.map(() => false));
  });
});
