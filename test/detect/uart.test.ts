// The software UART the detection tests rest on: at the sender's own setting it gives the bytes back; at another it
// gives what the RS-232 timing works out to, checked here by hand on a few characters.
import { describe, expect, it } from 'vitest';
import type { SerialSetting } from '../../src/detect/setting.js';
import { reframe, senderBits } from './uart.js';

const s = (baudRate: number, dataBits: 7 | 8 = 8, parity: SerialSetting['parity'] = 'none'): SerialSetting => ({ baudRate, dataBits, parity });

describe('software UART', () => {
  it('frames a byte as start, data bits least significant first, parity and stop', () => {
    // ENQ 0x05 = 0000 0101: LSB first 1 0 1 0 0 0 0 0; 7E1 adds the even parity bit (two ones: 0).
    expect([...senderBits(Buffer.from([0x05]), s(9600))].slice(4)).toEqual([0, 1, 0, 1, 0, 0, 0, 0, 0, 1]);
    expect([...senderBits(Buffer.from([0x04]), s(9600, 7, 'even'))].slice(4)).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 1, 1]);
  });

  it("gives every byte back at the sender's own setting, whatever the receiver clock phase", () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    for (const phase of [0, 0.5, 0.99]) {
      expect(reframe(all, s(9600), s(9600), { phase })).toEqual(all);
      expect(reframe(all, s(115200), s(115200), { phase })).toEqual(all);
    }
    const ascii = all.subarray(0, 128);
    expect(reframe(ascii, s(19200, 7, 'even'), s(19200, 7, 'even'))).toEqual(ascii);
  });

  it('reads a 7E1 sender at 8N1 with the parity bit in bit 7', () => {
    // EOT 0x04 has one 1 bit, so even parity sets bit 7: 0x84; ENQ 0x05 has two: 0x05.
    expect(reframe(Buffer.from([0x04, 0x05]), s(9600, 7, 'even'), s(9600))).toEqual(Buffer.from([0x84, 0x05]));
  });

  it("makes 0xFE of an ENQ sent twice as fast: the start bit is taken at the sender's fourth bit, the rest is idle", () => {
    expect(reframe(Buffer.from([0x05]), s(19200), s(9600))).toEqual(Buffer.from([0xfe]));
  });

  it('makes breaks of an ENQ sent 12 times slower: each low stretch outlasts a whole character and reads as NUL', () => {
    expect(reframe(Buffer.from([0x05]), s(9600), s(115200))).toEqual(Buffer.from([0x00, 0x00, 0x00]));
  });

  it('drops a character whose stop bit reads as space (a framing error, IGNPAR) and takes the space as the next start bit', () => {
    // ENQ at 4800 read at 9600: the samples give 0x66, but the stop bit falls in the sender's low data bits: dropped.
    // A 16550 then takes that space as a start bit and reads the sender's last zeros and its stop bit: 0x80.
    expect(reframe(Buffer.from([0x05]), s(4800), s(9600))).toEqual(Buffer.from([0x80]));
  });
});
