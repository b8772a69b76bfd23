// The token provider against the test server's real /oauth/token.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { createLimsServer, type LimsServer } from '../../src/lims-server/server.js';
import { createTokenProvider, refreshMargin, type LimsAuth } from '../../src/sinks/lims-token.js';

const SECRET = 'tok-secret-9Jw';
let server: LimsServer | undefined;
const agent = new Agent();
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function provider(auth: Partial<Extract<LimsAuth, { kind: 'oauth2' }>> = {}, now: () => number = Date.now, secret = SECRET) {
  server = createLimsServer({ clients: [{ clientId: 'gw', clientSecret: SECRET }] });
  await server.start();
  const full: LimsAuth = { kind: 'oauth2', tokenUrl: `${server.url}/oauth/token`, clientId: 'gw', clientSecretFile: '/secret', ...auth };
  return createTokenProvider(full, { dispatcher: agent, now, timeoutMs: 1000, readSecret: async () => secret });
}

describe('LIMS token provider', () => {
  it('many concurrent callers share one token request', async () => {
    const p = await provider();
    const got = await Promise.all(Array.from({ length: 50 }, () => p.token()));
    expect(new Set(got.map((g) => (g.ok ? g.token : g.reason))).size).toBe(1);
    expect(server!.stats().tokensIssued).toBe(1);
  });

  it('a refused token is refreshed once however many callers report it', async () => {
    const p = await provider();
    const first = await p.token();
    if (!first.ok) throw new Error(first.reason);
    const again = await Promise.all(Array.from({ length: 20 }, () => p.refresh(first.token)));
    expect(new Set(again.map((g) => g.ok && g.token)).size).toBe(1);
    expect(again[0]).not.toEqual(first);
    expect(server!.stats().tokensIssued).toBe(2);
  });

  it('counts a token life on the monotonic clock: a step of the wall clock neither keeps it too long nor drops it', async () => {
    let wall = 1_000_000;
    let steady = 5_000;
    server = createLimsServer({ clients: [{ clientId: 'gw', clientSecret: SECRET }] });
    await server.start();
    server.configure({ tokenTtlSeconds: 100, advertisedExpiresIn: 100 });
    const auth: LimsAuth = { kind: 'oauth2', tokenUrl: `${server.url}/oauth/token`, clientId: 'gw', clientSecretFile: '/secret' };
    const p = createTokenProvider(auth, { dispatcher: agent, now: () => wall, monotonic: () => steady, timeoutMs: 1000, readSecret: async () => SECRET });
    await p.token();
    wall += 365 * 86_400_000;
    await p.token();
    expect(server.stats().tokensIssued).toBe(1);
    wall -= 365 * 86_400_000 + 2 * 3_600_000;
    steady += 100_000;
    await p.token();
    expect(server.stats().tokensIssued).toBe(2);
  });

  it('is cached until shortly before expiry', async () => {
    let t = 1_000_000;
    const p = await provider({}, () => t);
    server!.configure({ tokenTtlSeconds: 100, advertisedExpiresIn: 100 });
    await p.token();
    t += 100_000 - refreshMargin(100_000) - 1;
    await p.token();
    expect(server!.stats().tokensIssued).toBe(1);
    t += 2;
    await p.token();
    expect(server!.stats().tokensIssued).toBe(2);
  });

  it('authenticates the client with form fields when configured', async () => {
    const p = await provider({ clientAuth: 'form' });
    expect((await p.token()).ok).toBe(true);
  });

  it('a wrong secret gives a reason without the secret', async () => {
    const p = await provider({}, Date.now, 'wrong-secret-77');
    const got = await p.token();
    expect(got).toEqual({ ok: false, reason: 'token endpoint answered 401 (invalid_client)' });
    expect(p.redact('x wrong-secret-77 y')).toBe('x [redacted] y');
  });

  it('still redacts the secret and the token in use after many refreshes', async () => {
    const p = await provider();
    let last = '';
    for (let i = 0; i < 40; i++) {
      const got = await p.refresh(last);
      if (!got.ok) throw new Error(got.reason);
      last = got.token;
    }
    expect(server!.stats().tokensIssued).toBe(40);
    expect(p.redact(`a ${SECRET} b ${last} c`)).toBe('a [redacted] b [redacted] c');
  });

  it('an unreachable token endpoint is a reason, not an exception', async () => {
    const p = await provider({ tokenUrl: 'http://127.0.0.1:1/oauth/token' });
    expect(await p.token()).toEqual({ ok: false, reason: 'token endpoint connect', unreachable: true });
  });
});
