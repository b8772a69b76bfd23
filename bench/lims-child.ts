// The LIMS test server in a child process for the LIMS benches (a real LIMS does not share the gateway's event loop
// either), with its admin routes: misbehavior changed between measurements, counters read after them.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { LimsFaults, LimsServerOptions, LimsServerStats, TestSpecimen } from '../src/lims-server/server.js';

/** A running child server. */
export interface LimsChild {
  url: string;
  configure(faults: Partial<LimsFaults>): Promise<void>;
  stats(): Promise<LimsServerStats>;
  /** Adds specimens with their orders (more than a command line holds). */
  loadOrders(specimens: readonly TestSpecimen[]): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `src/lims-server/main.js` with `options` and waits for its URL. */
export async function startLimsChild(options: LimsServerOptions): Promise<LimsChild> {
  const main = join(dirname(fileURLToPath(import.meta.url)), '../src/lims-server/main.js');
  const child: ChildProcess = spawn(process.execPath, [main, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const url = (JSON.parse(line) as { url: string }).url;
  const admin = async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${url}${path}`, { method, body: body === undefined ? null : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`LIMS test server ${path}: ${res.statusCode}`);
    return JSON.parse(text) as unknown;
  };
  return {
    url,
    configure: async (faults) => void (await admin('POST', '/_admin/faults', faults)),
    stats: async () => (await admin('GET', '/_admin/stats')) as LimsServerStats,
    loadOrders: async (specimens) => void (await admin('POST', '/_admin/orders', { specimens })),
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
