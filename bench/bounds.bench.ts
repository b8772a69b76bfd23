// Inputs that once grew without bound, against `labgate run` as a real child process, each beside the 150 MB RSS
// ceiling: an ENQ flood (5 MB of ENQ bytes from a peer that never reads its ACKs), and an analyzer sending 200
// messages of 1,000 distinct codes each while the page is read (the size of /status.json and how long it took).
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFrame } from '../drivers/astm/frame.js';
import { sig, type BenchLine } from './line.js';
import { freePort, procMb, startGateway, stopGateway } from './runtime.bench.js';

const RSS_CEILING_MB = 150;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['bounds.enq-flood', 'bounds.codes-seen'];

/** Runs the floods and emits their figures. */
export async function run(emit: (line: BenchLine) => void, wanted: (figure: string) => boolean = () => true): Promise<void> {
  if (wanted('bounds.enq-flood')) emit(await flood('bounds.enq-flood', enqFlood));
  if (wanted('bounds.codes-seen')) emit(await flood('bounds.codes-seen', codesFlood));
}

type Flood = (port: number, httpPort: number) => Promise<Record<string, number>>;

async function flood(name: string, send: Flood): Promise<BenchLine> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-bounds-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const port = await freePort();
    const yaml = `instruments:\n  - {id: chem, driver: astm, timezone: UTC, transport: {kind: tcp-server, host: 127.0.0.1, port: ${port}}}\n`;
    const gw = await startGateway(dir, name, yaml, '', cleanups);
    const pid = gw.child.pid!;
    const idleMb = procMb(pid, 'VmRSS');
    let peakMb = idleMb;
    const sampler = setInterval(() => (peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'))), 50);
    const start = performance.now();
    const extra = await send(port, gw.port);
    const seconds = (performance.now() - start) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    clearInterval(sampler);
    peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'), procMb(pid, 'VmHWM'));
    await stopGateway(gw.child);
    return { bench: name, value: sig(peakMb), unit: 'MB peak RSS', ceilingMb: RSS_CEILING_MB, idleMb: sig(idleMb), seconds: sig(seconds), ...extra };
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/** 5 MB of ENQ in 64 kB writes from a peer that never reads what the gateway answers. */
const enqFlood: Flood = async (port) => {
  const socket = await open(port);
  socket.pause();
  const chunk = Buffer.alloc(64 * 1024, 0x05);
  let sent = 0;
  for (; sent < 5 * 1024 * 1024; sent += chunk.length) if (!socket.write(chunk)) await once(socket, 'drain');
  await new Promise((r) => setTimeout(r, 2_000));
  socket.destroy();
  return { enqMb: sent / 1024 / 1024 };
};

/** 200 messages of 1,000 distinct codes, each ACKed, then /status.json read. */
const codesFlood: Flood = async (port, httpPort) => {
  const socket = await open(port);
  const replies: ((b: number) => void)[] = [];
  socket.on('data', (d: Buffer) => {
    for (const b of d) replies.shift()?.(b);
  });
  const reply = (data: Buffer): Promise<number> => {
    const got = new Promise<number>((resolve) => replies.push(resolve));
    socket.write(data);
    return got;
  };
  await reply(Buffer.from([0x05]));
  for (let m = 0; m < 200; m++) {
    const records = Array.from({ length: 1_000 }, (_, i) => `R|${i + 1}|^^^M${m}C${i}|1|mmol/L||N||F||||20260701120000`);
    const text = Buffer.from(`H|\\^&|||Bench\rP|1\rO|1|S${m}\r${records.join('\r')}\rL|1|N\r`, 'latin1');
    // One message in frames of at most 240 text bytes (LIS01-A2), the last one ETX.
    for (let at = 0, fn = 1; at < text.length; at += 240, fn = (fn + 1) % 8) {
      const last = at + 240 >= text.length;
      await reply(encodeFrame(fn, text.subarray(at, at + 240), last));
    }
  }
  socket.write(Buffer.from([0x04]));
  socket.destroy();
  const started = performance.now();
  const res = await fetch(`http://127.0.0.1:${httpPort}/status.json`);
  const body = await res.text();
  return { statusJsonKb: sig(body.length / 1024), statusJsonMs: sig(performance.now() - started) };
};
