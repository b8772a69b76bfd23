// The parts of ingest.during-drain: a backlog written straight into a store (as delivery-fixture.ts writes one, for
// both sinks), `labgate run` as a child with the event-loop probe preloaded, and analyzers on socat cables that time
// each commit-ACK (the ACK of a message's last frame, sent only once the message is committed).
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { AstmEmulator } from '../drivers/astm/emulator.js';
import { ACK, ETX, STX } from '../drivers/astm/frame.js';
import { systemClock } from '../src/clock.js';
import { buildPayload, sha256Hex } from '../src/payload.js';
import { clinicalDigest } from '../src/result.js';
import { INSERT_RESULT } from '../src/store/ingest.js';
import { outboxIdOf } from '../src/store/layout.js';
import { openStore } from '../src/store/store.js';
import { resultColumns } from '../src/store/stored-result.js';
import { astmCodes, astmInstrument, astmMessage } from '../test/e2e/analyzers.js';
import { Cable } from '../test/e2e/harness.js';
import { benchResult } from './delivery-fixture.js';

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, '..', '..', 'bin', 'labgate.js');

/** Writes `count` results into a new store in `dataDir`, each pending for both sinks and due now. */
export function seedBacklog(dataDir: string, sinks: readonly string[], count: number): void {
  const store = openStore({ dataDir, sinks, now: Date.now });
  try {
    const db = store.db;
    db.pragma('synchronous = OFF');
    const upsert = db.prepare(INSERT_RESULT);
    const insert = db.prepare(`INSERT INTO outbox (id, sink, dedup_key, state, attempts, next_attempt_at, created_at, updated_at)
      VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`);
    const due = Date.now() - 1_000;
    const chunk = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const result = benchResult(i);
        const payload = buildPayload(result, { receivedAt: due, rawSha256: 'f'.repeat(64) });
        const json = JSON.stringify(payload);
        const columns = resultColumns(result, payload.dedupKey, payload.recordId, clinicalDigest(result), due, json, sha256Hex(json));
        const { id } = upsert.get(columns) as { id: number };
        sinks.forEach((sink, slot) => insert.run(outboxIdOf(id, slot), sink, payload.dedupKey, due, due, due));
      }
    });
    for (let i = 0; i < count; i += 10_000) chunk(i, Math.min(count, i + 10_000));
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    store.close();
  }
}

/** A window's event-loop delay in the gateway, in ms. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
}

/** `labgate run --config FILE` with bench/loop-probe.js preloaded; output appended to `log`. */
export class ProbedGateway {
  private constructor(
    private readonly child: ChildProcess,
    private readonly logFd: number,
  ) {}

  static start(config: string, log: string): ProbedGateway {
    const logFd = openSync(log, 'a');
    const child = fork(bin, ['run', '--config', config], {
      execArgv: ['--import', new URL('./loop-probe.js', import.meta.url).href],
      stdio: ['ignore', logFd, logFd, 'ipc'],
      env: { ...process.env, NOTIFY_SOCKET: '' },
    });
    return new ProbedGateway(child, logFd);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Starts a window of event-loop delay ('reset') or reads the one running ('read'). */
  async loop(what: 'reset' | 'read'): Promise<LoopDelay> {
    const answer = once(this.child, 'message') as Promise<[LoopDelay]>;
    this.child.send(what);
    return (await answer)[0];
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = once(this.child, 'exit');
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    closeSync(this.logFd);
  }
}

/** Delivered rows per sink so far, from the gateway's /metrics. */
export async function deliveredSoFar(httpPort: number, sinks: readonly string[]): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const out: Record<string, number> = {};
  for (const sink of sinks) {
    const line = text
      .split('\n')
      .find((l) => l.startsWith('labgate_sink_outcomes_total{') && l.includes(`sink="${sink}"`) && l.includes('outcome="delivered"'));
    out[sink] = line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }
  return out;
}

/** An analyzer on its socat cable sending a message of `results` results every `everyMs`, each waiting for its ACK. */
export class TimedAnalyzer {
  readonly cable: Cable;
  /** Commit-ACK latencies (ms) of the messages sent since the last take(). */
  private latencies: number[] = [];
  private emulator: AstmEmulator | undefined;
  private sent = 0;
  acked = 0;
  unacked = 0;

  constructor(
    readonly id: string,
    dir: string,
  ) {
    mkdirSync(dir, { recursive: true });
    this.cable = new Cable(dir);
  }

  /** The instrument's entry in the gateway's configuration. */
  config(): object {
    return astmInstrument(this.id, this.cable.device, astmCodes);
  }

  async plug(): Promise<void> {
    await this.cable.plug();
    const port = await this.cable.openAnalyzer();
    let lastFrameAt: number | undefined;
    // The last frame (ETX) waits for the commit; its ACK is the figure. Every other reply is the link's own.
    const timed = {
      write: (data: Buffer): Promise<void> => {
        if (data[0] === STX && data.includes(ETX)) lastFrameAt = performance.now();
        return port.write(data);
      },
      onData: (listener: (data: Buffer) => void): void =>
        port.onData((data) => {
          if (lastFrameAt !== undefined && data.includes(ACK)) {
            this.latencies.push(performance.now() - lastFrameAt);
            lastFrameAt = undefined;
          }
          listener(data);
        }),
    };
    this.emulator = new AstmEmulator(timed, systemClock, { replyTimeoutMs: 15_000, maxRestarts: 0 });
  }

  /** Sends while `running()`, one message every `everyMs` from `offsetMs` on. */
  async sendLoop(everyMs: number, offsetMs: number, running: () => boolean, results: number): Promise<void> {
    await sleep(offsetMs);
    while (running()) {
      const started = performance.now();
      const outcome = await this.emulator!.send([astmMessage(`${this.id.toUpperCase()}-${++this.sent}`, results)]);
      if (outcome.kind === 'sent') this.acked++;
      else this.unacked++;
      await sleep(Math.max(0, everyMs - (performance.now() - started)));
    }
  }

  /** The latencies gathered since the last call. */
  take(): number[] {
    const taken = this.latencies;
    this.latencies = [];
    return taken;
  }
}

/** Writes a configuration for `labgate run` with the defaults a laboratory gets (no delivery tuning). */
export function writeGatewayConfig(dir: string, name: string, httpPort: number, instruments: readonly object[], sinks: object): string {
  const config = {
    gateway: { id: 'gw-bench', dataDir: join(dir, name), http: { host: '127.0.0.1', port: httpPort }, logLevel: 'info', diskFloorMb: 0 },
    instruments,
    sinks,
  };
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** Polls until `check` holds; throws naming `what` after `ms`. */
export async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!(await check().catch(() => false))) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}
