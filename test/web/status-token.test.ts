// A token-protected listener (what the runtime makes of a non-loopback host): nothing without the token,
// the login flow and its cookie, actors per session, bearer access for scrapers, and stale or forged sessions.
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopbackHost, StatusAuth } from '../../src/web/status/auth.js';
import { call, csrfOf, post, sessionCookie, startHarness, TOKEN, type Harness } from './harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

async function protectedListener(token = TOKEN): Promise<Harness> {
  const h = await startHarness({ requireToken: true, token });
  harnesses.push(h);
  h.source.state.deadLetters.push({ sink: 'lims', dedupKey: 'k1', accession: 'A1', loinc: null, reason: 'x', attempts: 1, failedAt: 0 });
  return h;
}

async function login(h: Harness): Promise<{ cookie: string; csrf: string }> {
  const reply = await post(h.port, '/login', undefined, { token: TOKEN });
  expect(reply.status).toBe(303);
  const cookie = sessionCookie(reply)!;
  const page = await call(h.port, 'GET', '/', { cookie });
  expect(page.status).toBe(200);
  return { cookie, csrf: csrfOf(page.body) };
}

describe('token-protected listener', () => {
  it('refuses every page, JSON, action, /healthz and /metrics without the token', async () => {
    const h = await protectedListener();
    for (const path of ['/', '/fragment', '/status.json', '/status.js', '/healthz', '/metrics', '/nonexistent']) {
      const reply = await call(h.port, 'GET', path);
      expect(reply.status, path).toBe(401);
      expect(reply.body, path).not.toContain('chem1');
    }
    for (const path of ['/actions/retry-dead-letter', '/actions/resolve-conflict', '/actions/reprocess-capture', '/logout']) {
      expect((await post(h.port, path, undefined, { sink: 'lims', all: '1', id: '1', choice: 'keep' })).status, path).toBe(401);
    }
    expect(h.source.audit).toEqual([]);
    const page = await call(h.port, 'GET', '/');
    expect(page.body).toContain('name="token"');
    expect((await call(h.port, 'GET', '/status.css')).status).toBe(200);
  });

  it('logs in once: the cookie is HttpOnly, SameSite=Strict, and holds no trace of the token', async () => {
    const h = await protectedListener();
    const wrong = await post(h.port, '/login', undefined, { token: 'guess' });
    expect(wrong.status).toBe(401);
    expect(sessionCookie(wrong)).toBeUndefined();
    const reply = await post(h.port, '/login', undefined, { token: `${TOKEN}\n` });
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe('/');
    const setCookie = reply.headers['set-cookie']![0]!;
    expect(setCookie).toMatch(/^labgate_session=v1\.[\w-]+\.[0-9a-z]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = sessionCookie(reply)!;
    const page = await call(h.port, 'GET', '/', { cookie });
    expect(page.status).toBe(200);
    expect(page.body).toContain('chem1');
    expect(page.body).not.toContain(TOKEN);
    expect((await call(h.port, 'GET', '/healthz', { cookie })).status).toBe(200);
    expect((await call(h.port, 'GET', '/login', { cookie })).headers.location).toBe('/');
  });

  it('audits actions as web:<hash of the session>, different per browser', async () => {
    const h = await protectedListener();
    h.source.state.deadLetters.push({ sink: 'lims', dedupKey: 'k2', accession: 'A2', loinc: null, reason: 'x', attempts: 1, failedAt: 0 });
    const one = await login(h);
    const two = await login(h);
    expect((await post(h.port, '/actions/retry-dead-letter', one.cookie, { csrf: one.csrf, sink: 'lims', key: 'k1' })).status).toBe(303);
    expect((await post(h.port, '/actions/retry-dead-letter', two.cookie, { csrf: two.csrf, sink: 'lims', key: 'k2' })).status).toBe(303);
    const [a, b] = h.source.audit.map((x) => x.actor);
    expect(a).toMatch(/^web:[0-9a-f]{8}$/);
    expect(b).toMatch(/^web:[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect((await post(h.port, '/actions/retry-dead-letter', one.cookie, { csrf: two.csrf, sink: 'lims', all: '1' })).status).toBe(403);
  });

  it('accepts the token as a bearer for GETs (scrapers), never for actions', async () => {
    const h = await protectedListener();
    expect((await call(h.port, 'GET', '/metrics', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    expect((await call(h.port, 'GET', '/healthz', { authorization: 'Bearer nope' })).status).toBe(401);
    const action = await post(h.port, '/actions/retry-dead-letter', undefined, { sink: 'lims', all: '1' }, { authorization: `Bearer ${TOKEN}` });
    expect(action.status).toBe(401);
  });

  it('refuses forged cookies and sessions of a rotated token; logout ends the session', async () => {
    const h = await protectedListener();
    const { cookie, csrf } = await login(h);
    const [name, value] = cookie.split('=') as [string, string];
    const parts = value.split('.');
    const forged = `${name}=${[parts[0], 'AAAAAAAAAAAAAAAAAAAAAAAA', parts[2], parts[3]].join('.')}`;
    expect((await call(h.port, 'GET', '/', { cookie: forged })).status).toBe(401);
    const rotated = await protectedListener('a-new-token-after-rotation');
    expect((await call(rotated.port, 'GET', '/', { cookie })).status).toBe(401);
    const out = await post(h.port, '/logout', cookie, { csrf });
    expect(out.status).toBe(303);
    expect(out.headers['set-cookie']![0]).toMatch(/^labgate_session=; .*Max-Age=0/);
  });

  it('expires sessions after their maximum age', async () => {
    const h = await protectedListener();
    const { cookie } = await login(h);
    h.clock.now += 31 * 86_400_000;
    expect((await call(h.port, 'GET', '/', { cookie })).status).toBe(401);
  });

  it('throttles logins after ten wrong tokens a minute', async () => {
    const h = await protectedListener();
    for (let i = 0; i < 10; i++) expect((await post(h.port, '/login', undefined, { token: `guess-${i}` })).status).toBe(401);
    const throttled = await post(h.port, '/login', undefined, { token: TOKEN });
    expect(throttled.status).toBe(429);
    expect(sessionCookie(throttled)).toBeUndefined();
    h.clock.now += 61_000;
    expect((await post(h.port, '/login', undefined, { token: TOKEN })).status).toBe(303);
  });

  it('refuses a login posted from another origin', async () => {
    const h = await protectedListener();
    const reply = await post(h.port, '/login', undefined, { token: TOKEN }, { origin: 'http://evil.example' });
    expect(reply.status).toBe(403);
    expect(sessionCookie(reply)).toBeUndefined();
  });
});

describe('isLoopbackHost and start-up', () => {
  it('tells loopback addresses from the rest', () => {
    for (const h of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '192.168.1.20', 'gateway.lab', '128.0.0.1']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('refuses to start a protected listener without a token or with a short one', () => {
    expect(() => new StatusAuth({ requireToken: true, now: () => 0 })).toThrow(/tokenFile/);
    expect(() => new StatusAuth({ requireToken: true, token: 'short-token', now: () => 0 })).toThrow(/at least 16/);
    expect(() => new StatusAuth({ requireToken: false, now: () => 0 })).not.toThrow();
  });
});
