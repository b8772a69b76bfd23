// SMART Backend Services: the sink signs a client assertion (RS384 or ES384) with the gateway's private key, and the
// FHIR test server's token endpoint verifies it with the public JWKS the operator registered, claim by claim.
import { afterEach, describe, expect, it } from 'vitest';
import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { clientAssertion, publicJwks, signingKey } from '../../src/sinks/client-assertion.js';
import { Agent } from 'undici';
import { createTokenProvider, type TokenAuth } from '../../src/sinks/lims-token.js';
import { fhirRig, fhirRows, keyPair, type FhirRig } from './harness.js';

let r: FhirRig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});
const signal = new AbortController().signal;

function smartAuth(tokenUrl: string, algorithm: 'ES384' | 'RS384', keyId: string): TokenAuth {
  return {
    kind: 'smart-backend',
    tokenUrl,
    clientId: 'labgate-gw1',
    privateKeyFile: '/run/credentials/fhir-key',
    algorithm,
    keyId,
    scope: 'system/Observation.write',
  };
}

/** A rig whose server knows `registered` as the client's JWKS and whose sink signs with `pem`. */
function smartRig(pem: string, registered: JsonWebKey, algorithm: 'ES384' | 'RS384', keyId = 'k1'): Promise<FhirRig> {
  const smartClients = [{ clientId: 'labgate-gw1', jwks: { keys: [registered] }, scopes: ['system/Observation.write'] }];
  return fhirRig(
    { smartClients },
    (server) => ({ auth: smartAuth(server.tokenUrl, algorithm, keyId) }),
    async () => pem,
  );
}

describe('SMART Backend Services', () => {
  it.each(['ES384', 'RS384'] as const)('%s: the token endpoint verifies the signed assertion; the batch goes with the token', async (alg) => {
    const { pem, jwk } = keyPair(alg, 'k1');
    r = await smartRig(pem, jwk, alg);
    expect((await r.sink.deliver(fhirRows(3), signal)).map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(r.server.stats().tokensIssued).toBe(1);
    expect(r.server.desk.lastRefusal).toBeNull();
  });

  it('an assertion signed with a key the operator did not register is refused: a sink-wide retry, nothing sent', async () => {
    const { pem } = keyPair('ES384', 'k1');
    const other = keyPair('ES384', 'k1');
    r = await smartRig(pem, other.jwk, 'ES384');
    const [out] = await r.sink.deliver(fhirRows(1), signal);
    expect(out).toMatchObject({
      kind: 'retry',
      scope: 'sink',
      reason: 'token endpoint answered 401 (invalid_client: signature does not verify with the registered key)',
    });
    expect(r.server.desk.lastRefusal).toBe('signature does not verify with the registered key');
    expect(r.server.stats().batches).toBe(0);
  });

  it('an assertion refused because the gateway clock is wrong says so, with the skew the server Date shows', async () => {
    const { pem, jwk } = keyPair('ES384', 'k1');
    r = await smartRig(pem, jwk, 'ES384');
    const twoHoursSlow = () => Date.now() - 2 * 3_600_000;
    const tokens = createTokenProvider(smartAuth(r.server.tokenUrl, 'ES384', 'k1'), {
      dispatcher: new Agent(),
      now: twoHoursSlow,
      timeoutMs: 5_000,
      readSecret: async () => pem,
    });
    const got = await tokens.token();
    expect(got).toMatchObject({ ok: false });
    expect(!got.ok && got.reason).toMatch(
      /^clock skew: token endpoint answered 401 \(invalid_client: expired\); the gateway's clock is 2h 0m behind the token server's \(its Date header\)/,
    );
  });

  it('a kid the server does not know is refused', async () => {
    const { pem, jwk } = keyPair('ES384', 'k1');
    r = await smartRig(pem, jwk, 'ES384', 'k2');
    await r.sink.deliver(fhirRows(1), signal);
    expect(r.server.desk.lastRefusal).toMatch(/kid k2/);
  });

  it('an expired token is refreshed once with a new assertion, however many entries wait', async () => {
    const { pem, jwk } = keyPair('ES384', 'k1');
    r = await smartRig(pem, jwk, 'ES384');
    await r.sink.deliver(fhirRows(1), signal);
    r.server.revokeTokens();
    expect((await r.sink.deliver(fhirRows(8, 1), signal)).every((o) => o.kind === 'delivered')).toBe(true);
    expect(r.server.stats().tokensIssued).toBe(2);
  });

  it('a key that does not suit the algorithm is a sink-wide retry naming the file, never the key', async () => {
    const { pem, jwk } = keyPair('ES384', 'k1');
    r = await smartRig(pem, jwk, 'RS384');
    const [out] = await r.sink.deliver(fhirRows(1), signal);
    expect(out).toMatchObject({ kind: 'retry', scope: 'sink', reason: 'RS384 needs an RSA private key of at least 2048 bits: /run/credentials/fhir-key' });
    expect(JSON.stringify(r.log.lines)).not.toContain('PRIVATE KEY');
  });
});

describe('the client assertion', () => {
  const now = Date.UTC(2026, 6, 1, 8, 0, 0);
  const { pem, jwk } = keyPair('ES384', 'k9');
  const key = createPrivateKey(pem);
  const claims = { clientId: 'gw', audience: 'https://ehr.example/token', keyId: 'k9', now, jti: 'j-1' };

  it('says what SMART Backend Services asks: RS384/ES384, kid, iss = sub, aud, exp five minutes ahead, jti', () => {
    const [h, p, sig] = clientAssertion(key, 'ES384', claims).split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({ alg: 'ES384', typ: 'JWT', kid: 'k9' });
    expect(JSON.parse(Buffer.from(p!, 'base64url').toString())).toEqual({
      iss: 'gw',
      sub: 'gw',
      aud: 'https://ehr.example/token',
      exp: now / 1000 + 300,
      iat: now / 1000,
      jti: 'j-1',
    });
    // RFC 7518 3.4: R || S, 48 bytes each for P-384.
    expect(Buffer.from(sig!, 'base64url')).toHaveLength(96);
  });

  it('the JWKS to register is the public half, with its kid and alg', () => {
    const jwks = publicJwks(key, 'ES384', 'k9');
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-384', x: jwk.x, y: jwk.y, kid: 'k9', alg: 'ES384', use: 'sig' });
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });

  it('the token endpoint refuses a replayed jti, a wrong audience and an expired assertion', async () => {
    r = await fhirRig({ smartClients: [{ clientId: 'gw', jwks: { keys: [jwk] } }], now: () => now });
    const grant = (assertion: string) =>
      r!.server.desk.grant(
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        }),
        undefined,
        'https://ehr.example/token',
        60,
        60,
      );
    const good = clientAssertion(key, 'ES384', claims);
    expect(grant(good).status).toBe(200);
    expect(grant(good)).toMatchObject({ status: 401 });
    expect(r.server.desk.lastRefusal).toBe('jti replayed');
    grant(clientAssertion(key, 'ES384', { ...claims, jti: 'j-2', audience: 'https://elsewhere/token' }));
    expect(r.server.desk.lastRefusal).toBe('aud is not this token endpoint');
    grant(clientAssertion(key, 'ES384', { ...claims, jti: 'j-3', now: now - 301_000 }));
    expect(r.server.desk.lastRefusal).toBe('expired');
  });

  it('signingKey refuses what is not a private key, without quoting it', () => {
    expect(signingKey('not a key', 'ES384')).toEqual({ ok: false, reason: 'the private key file holds no PEM private key' });
    expect(signingKey(pem, 'ES384')).toMatchObject({ ok: true });
  });
});

describe('labgate fhir-jwks', () => {
  it('prints the public JWKS of the configured key, never the private part', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { PassThrough } = await import('node:stream');
    const { main } = await import('../../src/cli.js');
    const dir = mkdtempSync(join(tmpdir(), 'labgate-jwks-'));
    const { pem, jwk } = keyPair('RS384', 'gw1-2026');
    writeFileSync(join(dir, 'key.pem'), pem, { mode: 0o600 });
    const auth = {
      kind: 'smart-backend',
      tokenUrl: 'https://ehr.example/token',
      clientId: 'gw1',
      privateKeyFile: join(dir, 'key.pem'),
      algorithm: 'RS384',
      keyId: 'gw1-2026',
    };
    writeFileSync(
      join(dir, 'labgate.yaml'),
      JSON.stringify({ gateway: { id: 'gw1', dataDir: dir }, sinks: { fhir: { baseUrl: 'https://ehr.example/fhir', auth } } }),
    );
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await main(['fhir-jwks', '--config', join(dir, 'labgate.yaml')], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: {} });
    expect(code).toBe(0);
    const jwks = JSON.parse(out) as { keys: Record<string, unknown>[] };
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'RSA', n: jwk.n, e: jwk.e, kid: 'gw1-2026', alg: 'RS384' })]);
    expect(jwks.keys[0]).not.toHaveProperty('d');
  });
});
