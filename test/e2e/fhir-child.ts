// The FHIR test server as its own process for the end-to-end tests, reached over HTTP as the gateway reaches it;
// the gateway authenticates with SMART Backend Services, its public key registered with the server as a JWKS.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Census, FhirServerStats } from '../../src/fhir-server/server.js';

const fhirMain = fileURLToPath(new URL('../../dist/src/fhir-server/main.js', import.meta.url));

/** The running server and the gateway's half of the key pair. */
export interface FhirChild {
  url: string;
  /** The `sinks.fhir` section for a gateway in `dir` (writes the private key file there). */
  sinkConfig(dir: string): object;
  census(): Promise<Census>;
  stats(): Promise<FhirServerStats>;
  stop(): Promise<void>;
}

/** Starts `node dist/src/fhir-server/main.js` with a client registered for a key made here. */
export async function startFhir(): Promise<FhirChild> {
  if (!existsSync(fhirMain)) throw new Error('dist/ is missing: run `npm run build` first (`npm test` does)');
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: 'e2e', alg: 'ES384' };
  const options = { smartClients: [{ clientId: 'gw-e2e', jwks: { keys: [jwk] } }] };
  const child = spawn(process.execPath, [fhirMain, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { url, tokenUrl } = await new Promise<{ url: string; tokenUrl: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const line = out
        .split('\n')
        .slice(0, -1)
        .find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as { url: string; tokenUrl: string });
    });
    child.once('exit', (code) => reject(new Error(`FHIR test server exited with ${code} before listening`)));
  });
  return {
    url,
    sinkConfig: (dir) => {
      const privateKeyFile = join(dir, 'fhir-key.pem');
      writeFileSync(privateKeyFile, pair.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      return {
        baseUrl: url,
        batchSize: 16,
        connections: 2,
        timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 },
        auth: { kind: 'smart-backend', tokenUrl, clientId: 'gw-e2e', privateKeyFile, keyId: 'e2e' },
      };
    },
    census: async () => (await fetch(`${new URL(url).origin}/_admin/census`)).json() as Promise<Census>,
    stats: async () => (await fetch(`${new URL(url).origin}/_admin/stats`)).json() as Promise<FhirServerStats>,
    stop: async () => {
      const gone = child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}
