// A UART line in software, to make what a receiver at a wrong setting reads from a sender's bytes (a pseudo-terminal
// passes bytes and ignores the rate, so it cannot show this). The sender puts each byte on the line as RS-232 frames
// it: a start bit (space, 0), the data bits least significant first, the parity bit, the stop bit (mark, 1), with
// the line idle at mark between bursts. The receiver does what a 16550-style UART does: it hunts for a space on its
// 16x clock, checks the start bit at half a bit, samples each bit in its middle, and then
//   - a stop bit read as space is a framing error: the byte is dropped (node-serialport sets IGNPAR), and the space is
//     taken as the next start bit (the 16550 resynchronizes so);
//   - space on every sample, stop bit included, is a break: Linux reads it as one NUL byte (IGNBRK and BRKINT unset),
//     and the receiver waits for mark before hunting again;
//   - a parity bit that does not match is dropped or kept (drivers differ: ftdi_sio flags it, the 8250 needs INPCK).
import type { SerialSetting } from '../../src/detect/setting.js';

export interface ReceiveOptions {
  parityErrors?: 'drop' | 'deliver';
  /** Where the receiver's 16x clock stands when the burst begins, as a fraction of one tick (0 to 1). */
  phase?: number;
  /** Idle bit times between the sender's bytes. */
  gapBits?: number;
}

/** The sender's bits for `bytes`, each one bit time of the sender's rate long, after a few bit times of idle. */
export function senderBits(bytes: Uint8Array, s: SerialSetting, gapBits = 0): Uint8Array {
  const bits: number[] = Array<number>(4).fill(1);
  for (const byte of bytes) {
    bits.push(0);
    let ones = 0;
    for (let i = 0; i < s.dataBits; i++) {
      const bit = (byte >> i) & 1;
      ones += bit;
      bits.push(bit);
    }
    if (s.parity !== 'none') bits.push(s.parity === 'even' ? ones & 1 : (ones & 1) ^ 1);
    bits.push(1);
    for (let g = 0; g < gapBits; g++) bits.push(1);
  }
  return Uint8Array.from(bits);
}

/** What a receiver at `r` reads from `bytes` sent at `s`. */
export function reframe(bytes: Uint8Array, s: SerialSetting, r: SerialSetting, o: ReceiveOptions = {}): Buffer {
  const bits = senderBits(bytes, s, o.gapBits ?? 0);
  const ts = 1 / s.baudRate;
  const tr = 1 / r.baudRate;
  const tick = tr / 16;
  const end = bits.length * ts;
  const line = (t: number): number => bits[Math.floor(t / ts)] ?? 1;
  const out: number[] = [];
  let ready = (o.phase ?? 0.37) * tick;
  while (ready < end) {
    const t0 = nextSpace(bits, ts, ready, tick);
    if (t0 === null) break;
    if (line(t0 + tr / 2) === 1) {
      ready = t0 + tr / 2;
      continue;
    }
    let value = 0;
    let ones = 0;
    for (let i = 0; i < r.dataBits; i++) {
      const bit = line(t0 + (1.5 + i) * tr);
      value |= bit << i;
      ones += bit;
    }
    let at = t0 + (1.5 + r.dataBits) * tr;
    let parityOk = true;
    let parityBit = 0;
    if (r.parity !== 'none') {
      parityBit = line(at);
      parityOk = r.parity === 'even' ? (ones + parityBit) % 2 === 0 : (ones + parityBit) % 2 === 1;
      at += tr;
    }
    const stop = line(at);
    if (stop === 0) {
      if (value === 0 && parityBit === 0) {
        out.push(0);
        ready = nextMark(bits, ts, at);
      } else {
        ready = at;
      }
      continue;
    }
    if (parityOk || o.parityErrors === 'deliver') out.push(value);
    ready = at;
  }
  return Buffer.from(out);
}

// The first 16x tick at or after `from` when the line is at space, or null when it stays at mark to the end.
function nextSpace(bits: Uint8Array, ts: number, from: number, tick: number): number | null {
  let i = Math.floor(from / ts);
  if (bits[i] === 0) return from;
  while (i < bits.length && bits[i] !== 0) i++;
  if (i >= bits.length) return null;
  const edge = i * ts;
  return from + Math.ceil((edge - from) / tick) * tick;
}

function nextMark(bits: Uint8Array, ts: number, from: number): number {
  let i = Math.floor(from / ts);
  while (i < bits.length && bits[i] !== 1) i++;
  return i * ts;
}
