// The FHIR test server in a child process for the FHIR bench: a real FHIR server does not share the gateway's event
// loop either. Started fresh for each measurement, so every one meets an empty repository.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { FhirServerOptions, FhirServerStats } from '../src/fhir-server/server.js';

/** A running child server. */
export interface FhirChild {
  url: string;
  stats(): Promise<FhirServerStats>;
  stop(): Promise<void>;
}

/** Starts `src/fhir-server/main.js` with `options` and waits for its base URL. */
export async function startFhirChild(options: FhirServerOptions): Promise<FhirChild> {
  const main = join(dirname(fileURLToPath(import.meta.url)), '../src/fhir-server/main.js');
  const child: ChildProcess = spawn(process.execPath, [main, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const url = (JSON.parse(line) as { url: string }).url;
  return {
    url,
    stats: async () => {
      const res = await request(`${new URL(url).origin}/_admin/stats`);
      return (await res.body.json()) as FhirServerStats;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
