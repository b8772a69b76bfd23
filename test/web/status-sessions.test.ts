// Sessions against someone on the lab network: login throttling per client address (a guesser at one bench locks out
// nobody else), logout that ends the session on the server (a copied cookie stops working, also after a restart),
// and a rewritten token file that takes effect without restarting the gateway.
import { mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRevokedSessions } from '../../src/web/status/revoked-sessions.js';
import { TokenFile } from '../../src/web/status/token-file.js';
import { call, csrfOf, post, sessionCookie, startHarness, TOKEN, type Harness } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-sessions-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function harness(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(options);
  cleanups.push(() => h.stop());
  return h;
}

async function login(h: Harness, token = TOKEN, from?: string): Promise<{ cookie: string; csrf: string }> {
  const reply = await post(h.port, '/login', undefined, { token }, {}, from);
  expect(reply.status).toBe(303);
  const cookie = sessionCookie(reply)!;
  const page = await call(h.port, 'GET', '/', { cookie });
  return { cookie, csrf: csrfOf(page.body) };
}

describe('login throttling', () => {
  it('counts wrong tokens per client address: a guesser does not lock out another bench', async () => {
    const h = await harness({ requireToken: true });
    for (let i = 0; i < 10; i++) expect((await post(h.port, '/login', undefined, { token: `guess-${i}` }, {}, '127.0.0.2')).status).toBe(401);
    expect((await post(h.port, '/login', undefined, { token: TOKEN }, {}, '127.0.0.2')).status).toBe(429);
    expect((await post(h.port, '/login', undefined, { token: TOKEN }, {}, '127.0.0.3')).status).toBe(303);
    h.clock.now += 61_000;
    expect((await post(h.port, '/login', undefined, { token: TOKEN }, {}, '127.0.0.2')).status).toBe(303);
  });
});

describe('logout', () => {
  it('ends the session on the server: the same cookie replayed afterwards is refused', async () => {
    const h = await harness({ requireToken: true });
    const { cookie, csrf } = await login(h);
    expect((await post(h.port, '/logout', cookie, { csrf })).status).toBe(303);
    expect((await call(h.port, 'GET', '/status.json', { cookie })).status).toBe(401);
    const other = await login(h);
    expect((await call(h.port, 'GET', '/status.json', { cookie: other.cookie })).status).toBe(200);
  });

  it('is remembered across a restart when the revocations live in a file, owner-only', async () => {
    const file = join(scratchDir(), 'revoked.json');
    const first = await harness({ requireToken: true, revoked: new FileRevokedSessions(file) });
    const { cookie, csrf } = await login(first);
    expect((await post(first.port, '/logout', cookie, { csrf })).status).toBe(303);
    await first.stop();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const restarted = await harness({ requireToken: true, revoked: new FileRevokedSessions(file) });
    expect((await call(restarted.port, 'GET', '/status.json', { cookie })).status).toBe(401);
    expect((await call(restarted.port, 'GET', '/status.json', { cookie: (await login(restarted)).cookie })).status).toBe(200);
  });
});

describe('a rewritten token file', () => {
  it('takes effect without a restart: the old token and its sessions stop working, the new one logs in', async () => {
    const dir = scratchDir();
    const path = join(dir, 'http-token');
    writeFileSync(path, `${TOKEN}\n`, { mode: 0o600 });
    let now = Date.parse('2026-11-30T12:00:00Z');
    const file = new TokenFile(path, () => now);
    const h = await harness({ requireToken: true, token: file.current });
    const before = await login(h);
    const rotated = 'rotated-token-0123456789abcdef';
    // An editor or `install -m 600` writes a new file and renames it over the old one.
    writeFileSync(join(dir, 'http-token.new'), `${rotated}\n`, { mode: 0o600 });
    renameSync(join(dir, 'http-token.new'), path);
    now += 1_000;
    expect((await call(h.port, 'GET', '/status.json', { cookie: before.cookie })).status).toBe(401);
    expect((await post(h.port, '/login', undefined, { token: TOKEN })).status).toBe(401);
    expect((await call(h.port, 'GET', '/metrics', { authorization: `Bearer ${TOKEN}` })).status).toBe(401);
    const after = await login(h, rotated);
    expect((await call(h.port, 'GET', '/status.json', { cookie: after.cookie })).status).toBe(200);
    // Rewritten in place too; a file that disappears refuses everyone rather than keep the withdrawn token.
    writeFileSync(path, 'another-token-after-that-one\n');
    now += 1_000;
    expect((await call(h.port, 'GET', '/status.json', { cookie: after.cookie })).status).toBe(401);
    rmSync(path);
    now += 1_000;
    expect((await post(h.port, '/login', undefined, { token: 'another-token-after-that-one' })).status).toBe(401);
  });

  it('is looked at no more than once a second', () => {
    const dir = scratchDir();
    const path = join(dir, 'http-token');
    writeFileSync(path, 'first-token-0123456789');
    let now = 0;
    const file = new TokenFile(path, () => now);
    writeFileSync(path, 'second-token-0123456789');
    now += 999;
    expect(file.current()).toBe('first-token-0123456789');
    now += 1;
    expect(file.current()).toBe('second-token-0123456789');
  });
});
