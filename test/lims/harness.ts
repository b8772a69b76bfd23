// Test harness for the LIMS sink: a real test server on 127.0.0.1, a sink pointed at it, captured log lines,
// and a simple drain loop standing in for the delivery engine (re-queues retries, honors notBefore).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimsServer, type LimsServer, type LimsServerOptions } from '../../src/lims-server/server.js';
import { createLimsSink, type LimsSinkDeps, type LimsSinkOptions } from '../../src/sinks/lims.js';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';
import type { Log } from '../../src/log.js';

export const CLIENT_SECRET = 'labgate-secret-Zq81';

/** Every line the sink logged, as JSON text. */
export function captureLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push(JSON.stringify({ level, ...obj, msg }));
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), fatal: at('fatal') };
}

/** A started server and a sink on it; call `close()` after. */
export interface Rig {
  server: LimsServer;
  sink: Sink;
  log: ReturnType<typeof captureLog>;
  close(): Promise<void>;
}

/** Starts a server with `serverOptions`, and a sink with `sinkOptions` (and `now`, default Date.now) over it. */
export async function rig(
  serverOptions: LimsServerOptions = {},
  sinkOptions: Partial<LimsSinkOptions> = {},
  deps: Pick<Partial<LimsSinkDeps>, 'now'> = {},
): Promise<Rig> {
  const server = createLimsServer({ clients: [{ clientId: 'labgate', clientSecret: CLIENT_SECRET }], ...serverOptions });
  await server.start();
  const dir = mkdtempSync(join(tmpdir(), 'lims-'));
  writeFileSync(join(dir, 'secret'), CLIENT_SECRET + '\n');
  const log = captureLog();
  const sink = createLimsSink(
    {
      baseUrl: server.url,
      resourcePath: '/api/v1/results',
      concurrency: 8,
      timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
      auth: { kind: 'oauth2', tokenUrl: `${server.url}/oauth/token`, clientId: 'labgate', clientSecretFile: join(dir, 'secret') },
      processingRetryMs: 50,
      ...sinkOptions,
    },
    { now: deps.now ?? Date.now, log, gatewayId: 'gw-test' },
  );
  return {
    server,
    sink,
    log,
    close: async () => {
      await sink.close();
      await server.stop();
    },
  };
}

/** Final outcome per row id, and every outcome seen on the way. */
export interface Drained {
  final: Map<number, Outcome>;
  seen: Outcome[];
  rounds: number;
}

/** Delivers until no row is retried (or `maxRounds`), re-queuing retries and waiting for their notBefore. */
export async function drain(
  sink: Sink,
  rows: readonly OutboxRow[],
  opts: { batch?: number; maxRounds?: number; onRound?: (round: number) => void } = {},
): Promise<Drained> {
  const final = new Map<number, Outcome>();
  const seen: Outcome[] = [];
  let pending = [...rows];
  let rounds = 0;
  while (pending.length > 0 && rounds < (opts.maxRounds ?? 200)) {
    opts.onRound?.(rounds++);
    const again: OutboxRow[] = [];
    let wakeAt = 0;
    for (let i = 0; i < pending.length; i += opts.batch ?? 64) {
      const batch = pending.slice(i, i + (opts.batch ?? 64));
      const outcomes = await sink.deliver(batch, new AbortController().signal);
      outcomes.forEach((o, k) => {
        const row = batch[k]!;
        seen.push(o);
        if (o.kind === 'retry') {
          again.push({ ...row, attempts: row.attempts + 1 });
          wakeAt = Math.max(wakeAt, o.notBefore ?? 0);
        } else final.set(row.id, o);
      });
    }
    pending = again;
    if (pending.length > 0) await new Promise((r) => setTimeout(r, Math.min(1500, Math.max(10, wakeAt - Date.now()))));
  }
  return { final, seen, rounds };
}
