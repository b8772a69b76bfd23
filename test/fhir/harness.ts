// Test harness for the FHIR sink: the FHIR test server on 127.0.0.1 (Medplum's router and memory repository behind
// a real HTTP listener), a sink pointed at it, captured log lines, and outbox rows as the store hands them out.
import { generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { FhirTestServer, type FhirServerOptions } from '../../src/fhir-server/server.js';
import { sampleResult, sampleRow } from '../../src/lims-server/sample-rows.js';
import type { KeyedResultInput } from '../../src/result.js';
import { createFhirSink, type FhirSink, type FhirSinkOptions } from '../../src/sinks/fhir.js';
import type { OutboxRow } from '../../src/delivery/contract.js';
import { captureLog } from '../lims/harness.js';

/** labgate's default systems, as the config schema fills them in. */
export const SYSTEMS = {
  identifierSystem: 'urn:labgate:dedup-key',
  specimenSystem: 'urn:labgate:accession',
  deviceSystem: 'urn:labgate:instrument',
  analyzerCodeSystem: 'urn:labgate:test-code',
} as const;

/** Sink options for a server at `baseUrl`, without auth. */
export function sinkOptions(baseUrl: string, overrides: Partial<FhirSinkOptions> = {}): FhirSinkOptions {
  return {
    ...SYSTEMS,
    baseUrl,
    createMode: 'auto',
    qc: false,
    ucumUnits: {},
    timeouts: { connectMs: 1000, headersMs: 2000, bodyMs: 2000 },
    auth: { kind: 'none' },
    connections: 4,
    ...overrides,
  };
}

/** A started server and a sink on it; call `close()` after. */
export interface FhirRig {
  server: FhirTestServer;
  sink: FhirSink;
  log: ReturnType<typeof captureLog>;
  close(): Promise<void>;
}

/** Sink options over the defaults, or a function of the started server (its token URL, say). */
export type SinkOverrides = Partial<FhirSinkOptions> | ((server: FhirTestServer) => Partial<FhirSinkOptions>);

/** Starts a server with `serverOptions` and a sink over it. */
export async function fhirRig(
  serverOptions: FhirServerOptions = {},
  overrides: SinkOverrides = {},
  readSecret?: (path: string) => Promise<string>,
): Promise<FhirRig> {
  const server = new FhirTestServer(serverOptions);
  await server.start();
  const log = captureLog();
  const options = sinkOptions(server.url, typeof overrides === 'function' ? overrides(server) : overrides);
  const sink = createFhirSink(options, { now: Date.now, log, ...(readSecret ? { readSecret } : {}) });
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

/** Outbox row `id` carrying result `i` (with `overrides`), for the FHIR sink. */
export function fhirRow(id: number, i: number, overrides: Partial<KeyedResultInput> = {}, etag: string | null = null): OutboxRow {
  return { ...sampleRow(id, sampleResult(i, overrides), etag), sink: 'fhir' };
}

/** `n` rows of distinct results. */
export function fhirRows(n: number, first = 0): OutboxRow[] {
  return Array.from({ length: n }, (_, k) => fhirRow(first + k + 1, first + k));
}

/** An ES384 or RS384 key pair: the private PEM and the public JWK with its kid. */
export function keyPair(algorithm: 'ES384' | 'RS384', kid: string): { pem: string; jwk: JsonWebKey } {
  const pair = algorithm === 'ES384' ? generateKeyPairSync('ec', { namedCurve: 'P-384' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    pem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    jwk: { ...pair.publicKey.export({ format: 'jwk' }), kid, alg: algorithm },
  };
}
