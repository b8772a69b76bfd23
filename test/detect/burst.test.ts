// Judging a burst: every sample read at its sender's setting is recognized; read at any other rate, what the software
// UART makes of it is noise, with one exception written down below, which the trial order never reaches first.
import { describe, expect, it } from 'vitest';
import { judgeBurst, type BurstVerdict } from '../../src/detect/burst.js';
import { candidateSettings, settingLabel, type SerialSetting } from '../../src/detect/setting.js';
import { expected, samples, type SampleName } from './samples.js';
import { reframe } from './uart.js';

const all = candidateSettings({ baudRate: 'auto', dataBits: 'auto', parity: 'auto' });
const senders: SerialSetting[] = [...all, ...all.filter((s) => s.dataBits === 7).map((s) => ({ ...s, parity: 'odd' as const }))];
const names = Object.keys(samples) as SampleName[];
const formatOf = (s: SerialSetting): '8N1' | '7E1' | '7O1' => (s.dataBits === 8 ? '8N1' : s.parity === 'even' ? '7E1' : '7O1');

function recognized(v: BurstVerdict): Extract<BurstVerdict, { kind: 'recognized' }> {
  if (v.kind !== 'recognized') throw new Error(`not recognized: ${v.why}`);
  return v;
}

describe("a burst read at the sender's rate", () => {
  it.each(names)('%s: recognized at every rate and format, the format read from bit 7 when the receiver takes 8 data bits', (name) => {
    for (const sender of senders) {
      for (const phase of [0.05, 0.5, 0.95]) {
        const at8N1 = recognized(judgeBurst(reframe(samples[name], sender, { ...sender, dataBits: 8, parity: 'none' }, { phase }), 8));
        expect(at8N1.recognition, `${name} from ${settingLabel(sender)}`).toMatchObject(expected[name]);
        expect(at8N1.formats[formatOf(sender)], `${name} from ${settingLabel(sender)}`).toBe(true);
        if (sender.dataBits === 8) continue;
        const sevenBit = reframe(samples[name], sender, { ...sender, dataBits: 8, parity: 'none' });
        if (sevenBit.some((b) => b >= 0x80)) expect(at8N1.formats['8N1']).toBe(false);
        if (sender.parity === 'even')
          expect(recognized(judgeBurst(reframe(samples[name], sender, sender, { phase }), 7)).recognition).toMatchObject(expected[name]);
      }
    }
  });
});

describe('a burst read at a wrong rate', () => {
  it.each(names)('%s: noise at every other rate, but for one lone control byte from a sender at least 16 times faster', (name) => {
    const exceptions: string[] = [];
    for (const sender of senders) {
      for (const receiver of all.filter((r) => r.baudRate !== sender.baudRate)) {
        for (const phase of [0.05, 0.5, 0.95]) {
          const read = reframe(samples[name], sender, receiver, { phase });
          const verdict = judgeBurst(read, receiver.dataBits);
          if (verdict.kind === 'noise') continue;
          // A long burst 16 times faster than the receiver can leave a single byte that happens to be ENQ or EOT.
          expect(read.length, `${name} from ${settingLabel(sender)} read at ${settingLabel(receiver)}: ${read.toString('hex')}`).toBe(1);
          expect(sender.baudRate / receiver.baudRate).toBeGreaterThanOrEqual(16);
          exceptions.push(`${settingLabel(sender)}→${settingLabel(receiver)}`);
        }
      }
    }
    // ENQ and EOT are one byte each, so no wrong rate leaves them as themselves.
    if (name === 'enq' || name === 'eot') expect(exceptions).toEqual([]);
  });
});

describe('verdicts and their reasons', () => {
  it('calls NUL bytes framing noise and high-bit bytes what they are', () => {
    expect(judgeBurst(Buffer.from([0, 0, 0]), 8)).toMatchObject({ kind: 'noise', why: expect.stringContaining('framing noise') });
    expect(judgeBurst(Buffer.from([0xfe, 0xff, 0xfe, 0x41]), 8)).toMatchObject({ kind: 'noise', why: '3 of 4 bytes have the high bit set' });
    expect(judgeBurst(Buffer.from('ab', 'latin1'), 8)).toMatchObject({ kind: 'noise', why: '2 bytes: no ENQ, no MLLP block, no line of text' });
    expect(judgeBurst(Buffer.from([0x01, 0x41, 0x42, 0x1a]), 8)).toMatchObject({ kind: 'noise', why: expect.stringContaining('control characters') });
  });

  it('reads ENQ and EOT with their counts, and frames sent without waiting', () => {
    expect(judgeBurst(Buffer.from([4, 5]), 8)).toMatchObject({
      kind: 'recognized',
      recognition: { protocol: 'astm', form: 'link', enq: 1, eot: 1, frames: 0 },
      formats: { '8N1': true, '7E1': false, '7O1': false },
    });
    const frame = Buffer.from('\x021H|\\^&\r\x0312\r\n', 'latin1');
    expect(judgeBurst(frame, 8)).toMatchObject({ kind: 'recognized', recognition: { protocol: 'astm', form: 'link', frames: 1 } });
  });

  it('names 7E1 and 7O1 from the parity in bit 7: EOT and ENQ tell them apart', () => {
    expect(judgeBurst(Buffer.from([0x05]), 8)).toMatchObject({ formats: { '8N1': true, '7E1': true, '7O1': false } });
    expect(judgeBurst(Buffer.from([0x84]), 8)).toMatchObject({
      recognition: { protocol: 'astm', eot: 1 },
      formats: { '8N1': false, '7E1': true, '7O1': false },
    });
    expect(judgeBurst(Buffer.from([0x85]), 8)).toMatchObject({
      recognition: { protocol: 'astm', enq: 1 },
      formats: { '8N1': false, '7E1': false, '7O1': true },
    });
  });

  it('tells HL7 segments without MLLP from printed lines, and Latin-1 letters in a printout are text', () => {
    expect(judgeBurst(Buffer.from('MSH|^~\\&|A|B\rPID|1\r', 'latin1'), 8)).toMatchObject({ recognition: { protocol: 'hl7', form: 'segments' } });
    expect(judgeBurst(Buffer.from('Glucose   5.4 mmol/L\rHämoglobin 13.9 g/dL\r', 'latin1'), 8)).toMatchObject({
      recognition: { protocol: 'line', form: 'lines', lines: 2, delimiter: '\r' },
    });
  });
});
