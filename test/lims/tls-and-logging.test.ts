// HTTPS with a custom CA file, and a real pino logger with the sink's redaction paths.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleRows } from '../../src/lims-server/sample-rows.js';
import { createLimsServer, type LimsServer } from '../../src/lims-server/server.js';
import { createLimsSink, type LimsSinkOptions } from '../../src/sinks/lims.js';
import { limsRedactPaths } from '../../src/sinks/lims-token.js';
import type { Sink } from '../../src/delivery/contract.js';
import { silentLog } from '../../src/log.js';

const SECRET = 'tls-secret-4Kp';
const dir = mkdtempSync(join(tmpdir(), 'lims-tls-'));
let server: LimsServer | undefined;
let sink: Sink | undefined;
afterEach(async () => {
  await sink?.close();
  await server?.stop();
  sink = server = undefined;
});

/** A self-signed certificate for 127.0.0.1: it is its own CA. */
function selfSigned(): { key: string; cert: string; caFile: string } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8'), caFile: cert };
}

function options(url: string, extra: Partial<LimsSinkOptions> = {}): LimsSinkOptions {
  writeFileSync(join(dir, 'secret'), SECRET);
  return {
    baseUrl: url,
    resourcePath: '/api/v1/results',
    concurrency: 4,
    timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
    auth: { kind: 'oauth2', tokenUrl: `${url}/oauth/token`, clientId: 'labgate', clientSecretFile: join(dir, 'secret') },
    ...extra,
  };
}

const silent = silentLog;

describe('LIMS sink over HTTPS and with pino', () => {
  it('trusts the LIMS certificate through the configured CA file, and only then', async () => {
    const { key, cert, caFile } = selfSigned();
    server = createLimsServer({ tls: { key, cert }, clients: [{ clientId: 'labgate', clientSecret: SECRET }] });
    await server.start();
    expect(server.url).toMatch(/^https:/);
    sink = createLimsSink(options(server.url, { caFile }), { now: Date.now, log: silent, gatewayId: 'gw' });
    expect((await sink.deliver(sampleRows(2), new AbortController().signal)).map((o) => o.kind)).toEqual(['delivered', 'delivered']);
    const untrusting = createLimsSink(options(server.url), { now: Date.now, log: silent, gatewayId: 'gw' });
    const [out] = await untrusting.deliver(sampleRows(1, 10), new AbortController().signal);
    await untrusting.close();
    // An untrusted certificate fails the handshake: no connection is made, so the sink is unreachable as a whole.
    expect(out).toMatchObject({ kind: 'retry', scope: 'unreachable' });
  });

  it('logs through a real pino logger without a secret or a token in any line', async () => {
    const lines: string[] = [];
    const dest = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const log = pino({ level: 'debug', redact: [...limsRedactPaths] }, dest);
    server = createLimsServer({ clients: [{ clientId: 'labgate', clientSecret: SECRET }], faults: { rate500: 0.5, tokenTtlSeconds: 0 } });
    await server.start();
    sink = createLimsSink(options(server.url), { now: Date.now, log: log.child({ sink: 'lims' }), gatewayId: 'gw' });
    const outs = await sink.deliver(sampleRows(8), new AbortController().signal);
    log.info({ headers: { authorization: `Bearer ${server.issuedTokens()[0]}` } }, 'a careless caller');
    expect(lines.length).toBeGreaterThan(1);
    const text = lines.join('') + JSON.stringify(outs);
    for (const s of [SECRET, ...server.issuedTokens()]) expect(text).not.toContain(s);
  });
});
