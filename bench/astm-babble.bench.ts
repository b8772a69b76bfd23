// A babbling ASTM line against `labgate run` as a real child process: one instrument opens a frame (ENQ, STX 1)
// and then sends 500 MB of text that never ends, as fast as TCP takes it, while a second instrument keeps
// sending messages. Figures: the gateway's peak RSS beside its 150 MB ceiling, and the other instrument's
// ACK latency beside the 100 ms ceiling (its ENQ answered, and its completing frame answered after the commit),
// with the same latencies measured just before on a quiet line for comparison.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { encodeFrame } from '../drivers/astm/frame.js';
import { sig, type BenchLine } from './line.js';
import { freePort, procMb, startGateway, stopGateway } from './runtime.bench.js';

const BABBLE_BYTES = 500 * 1024 * 1024;
const CHUNK = 64 * 1024;
const RSS_CEILING_MB = 150;
const ACK_CEILING_MS = 100;

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['astm.babble'];

/** Runs the babble and emits `astm.babble`. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-babble-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const [babblePort, otherPort] = [await freePort(), await freePort()];
    const instrument = (id: string, port: number): string =>
      `  - {id: ${id}, driver: astm, timezone: UTC, transport: {kind: tcp-server, host: 127.0.0.1, port: ${port}}, mapping: [{code: K, loinc: 2823-3, unit: mmol/L}]}`;
    const yaml = `instruments:\n${instrument('babbler', babblePort)}\n${instrument('chem', otherPort)}\n`;
    const gw = await startGateway(dir, 'babble', yaml, '', cleanups);
    const pid = gw.child.pid!;
    const other = await Analyzer.open(otherPort);
    const quiet = await other.sessions(() => false, 20);
    const idleMb = procMb(pid, 'VmRSS');
    let peakMb = idleMb;
    const sampler = setInterval(() => (peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'))), 50);
    let babbling = true;
    const start = performance.now();
    const [sent, during] = await Promise.all([babble(babblePort).finally(() => (babbling = false)), other.sessions(() => babbling)]);
    const seconds = (performance.now() - start) / 1000;
    clearInterval(sampler);
    peakMb = Math.max(peakMb, procMb(pid, 'VmRSS'));
    other.close();
    await stopGateway(gw.child);
    emit({
      bench: 'astm.babble',
      value: sig(peakMb),
      unit: 'MB peak RSS',
      ceilingMb: RSS_CEILING_MB,
      idleMb: sig(idleMb),
      babbleMb: sig(sent / 1024 / 1024),
      seconds: sig(seconds),
      babbleMBps: sig(sent / 1024 / 1024 / seconds),
      otherEnqAckMs: during.enq,
      otherCommitAckMs: during.commit,
      ackCeilingMs: ACK_CEILING_MS,
      otherMessages: during.messages,
      quietEnqAckMs: quiet.enq,
      quietCommitAckMs: quiet.commit,
    });
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

/**
 * ENQ, STX 1, then text that never ends, written as fast as the socket drains, from a worker thread of its own
 * so that writing it never delays the other analyzer's measurements. Returns the bytes sent.
 */
function babble(port: number): Promise<number> {
  const worker = new Worker(
    `const { connect } = require('node:net');
    const { once } = require('node:events');
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const socket = connect(workerData.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write(Buffer.from([0x05]));
      await once(socket, 'data');
      socket.write(Buffer.from([0x02, 0x31]));
      const text = Buffer.alloc(workerData.chunk, 0x41);
      let sent = 0;
      while (sent < workerData.bytes) {
        sent += text.length;
        if (!socket.write(text)) await once(socket, 'drain');
      }
      await new Promise((resolve) => socket.end(resolve));
      parentPort.postMessage(sent);
    })();`,
    { eval: true, workerData: { port, chunk: CHUNK, bytes: BABBLE_BYTES } },
  );
  return new Promise((resolve, reject) => {
    worker.once('message', (sent: number) => void worker.terminate().then(() => resolve(sent)));
    worker.once('error', reject);
  });
}

/** An analyzer sending one-frame messages and timing the gateway's replies (shared with astm-query-large). */
export class Analyzer {
  private replies: ((byte: number) => void)[] = [];

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      for (const byte of d) this.replies.shift()?.(byte);
    });
  }

  static async open(port: number): Promise<Analyzer> {
    return new Analyzer(await open(port));
  }

  /** Sessions (ENQ, one frame, EOT) while `more()` or for `count` of them; latency percentiles in ms. */
  async sessions(more: () => boolean, count = Infinity) {
    const enq: number[] = [];
    const commit: number[] = [];
    for (let n = 0; n < count && (count !== Infinity || more()); n++) {
      enq.push(await this.timed(Buffer.from([0x05])));
      const text = `H|\\^&|||Bench\rP|1\rO|1|B${n}\rR|1|^^^K|4.${n % 10}|mmol/L||N||F||||20260701${String(100000 + n).slice(-6)}\rL|1|N\r`;
      commit.push(await this.timed(encodeFrame(1, Buffer.from(text, 'latin1'), true)));
      this.socket.write(Buffer.from([0x04]));
      await sleep(20);
    }
    return { enq: percentiles(enq), commit: percentiles(commit), messages: commit.length };
  }

  close(): void {
    this.socket.destroy();
  }

  private async timed(data: Buffer): Promise<number> {
    const reply = new Promise<number>((resolve) => this.replies.push(resolve));
    const start = performance.now();
    this.socket.write(data);
    const byte = await reply;
    if (byte !== 0x06) throw new Error(`expected ACK, got ${byte}`);
    return performance.now() - start;
  }
}

function percentiles(ms: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => sig(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { p50: at(0.5), p99: at(0.99), max: sig(sorted.at(-1) ?? NaN) };
}

async function open(port: number): Promise<Socket> {
  for (let attempt = 0; ; attempt++) {
    try {
      const socket = connect(port, '127.0.0.1');
      await once(socket, 'connect');
      // One byte per reply: no coalescing delay on either side of the measurement.
      socket.setNoDelay(true);
      return socket;
    } catch (err) {
      if (attempt > 50) throw err;
      await sleep(100);
    }
  }
}
