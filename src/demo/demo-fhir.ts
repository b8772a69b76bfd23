// The demo's FHIR server (`labgate demo --fhir`): the FHIR test server in this process, with a P-384 key pair made
// for this run whose public half is registered as the gateway's JWKS, so the sink authenticates with SMART Backend
// Services as it would at a hospital. The server needs the development dependencies (Medplum's FHIR router and the
// R4 definitions), so it is loaded only when asked for.
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Census, FhirTestServer } from '../fhir-server/server.js';
import { LabgateError } from '../errors.js';

/** What the demo knows of its FHIR server. */
export interface DemoFhir {
  server: FhirTestServer;
  /** The gateway's private key (PEM), in the demo's temporary directory. */
  keyFile: string;
  census(): Promise<Census>;
}

export const DEMO_FHIR_CLIENT = 'labgate-demo';
export const DEMO_FHIR_KEY_ID = 'demo-gw1';

/** Starts the FHIR test server on 127.0.0.1 with the gateway's key registered. */
export async function startDemoFhir(dir: string): Promise<DemoFhir> {
  let module: typeof import('../fhir-server/server.js');
  try {
    module = await import('../fhir-server/server.js');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new LabgateError(
      'USAGE',
      "labgate demo --fhir needs the FHIR test server's development dependencies (@medplum/*): run `npm ci` in a labgate checkout",
    );
  }
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const keyFile = join(dir, 'fhir-private-key.pem');
  writeFileSync(keyFile, pair.privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid: DEMO_FHIR_KEY_ID, alg: 'ES384' };
  const server = new module.FhirTestServer({ smartClients: [{ clientId: DEMO_FHIR_CLIENT, jwks: { keys: [jwk] }, scopes: ['system/Observation.write'] }] });
  await server.start();
  return { server, keyFile, census: () => server.census() };
}
