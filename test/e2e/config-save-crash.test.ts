// A power cut during a configuration save from the status page: the real `labgate run` SIGKILLs itself between the
// fsync of the new instruments file and its rename (LABGATE_FAULT_KILL_BEFORE_CONFIG_RENAME, the test-only entry
// point). The configuration read at the next start is the old one, the gateway starts on it, and the same change then
// saves. The model file system of test/runtime/config-versions.test.ts cuts the power before every other step.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { versionOf } from '../../src/config/config-versions.js';
import { call, csrfOf, post, sessionCookie } from '../web/harness.js';
import { freePort, GatewayChild, scratch, until, writeConfig } from './harness.js';

const ADMIN = 'e2e-admin-token-for-the-crash-test';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An unlocked page session on the gateway at `port`: its cookies and CSRF token. */
async function unlocked(port: number): Promise<{ cookie: string; csrf: string }> {
  const first = await call(port, 'GET', '/configure');
  const session = sessionCookie(first)!;
  const csrf = csrfOf(first.body);
  const reply = await post(port, '/configure/unlock', session, { csrf, token: ADMIN, name: 'Crash Test' });
  expect(reply.status).toBe(303);
  const admin = reply.headers['set-cookie']!.find((c) => c.startsWith('labgate_admin='))!.split(';')[0]!;
  return { cookie: `${session}; ${admin}`, csrf };
}

const add = (id: string, port: number, base: string): Record<string, string> => ({
  change: 'add',
  base,
  kind: 'tcp-server',
  id,
  driver: 'hl7',
  timezone: 'UTC',
  port: String(port),
});

describe('a power cut during a configuration save', () => {
  it('leaves the old configuration, which the gateway starts on; the change then saves', { timeout: 60_000 }, async () => {
    const s = scratch('config-crash');
    cleanups.push(s.cleanup);
    const httpPort = await freePort();
    const file = writeConfig({ dir: s.dir, httpPort, instruments: [] });
    const config = JSON.parse(readFileSync(file, 'utf8')) as { gateway: { http: object } };
    const adminTokenFile = join(s.dir, 'admin-token');
    writeFileSync(adminTokenFile, ADMIN, { mode: 0o600 });
    config.gateway.http = { ...config.gateway.http, adminTokenFile };
    writeFileSync(file, JSON.stringify(config));
    const instrumentsFile = join(s.dir, 'data', 'instruments.yaml');
    const gateway = new GatewayChild(file, httpPort, s.dir);
    cleanups.push(() => gateway.stopIfRunning());
    const [one, two] = [await freePort(), await freePort()];

    // A first instrument saved normally: the old configuration of the crash.
    await gateway.start();
    let page = await unlocked(httpPort);
    const first = await post(httpPort, '/configure/apply', page.cookie, { csrf: page.csrf, ...add('hema1', one, versionOf(null)) });
    expect(first.status, first.body).toBe(200);
    const old = readFileSync(instrumentsFile, 'utf8');
    await gateway.kill('SIGTERM');

    // The power cut: the gateway dies between the fsync of the new file and its rename.
    await gateway.start({ LABGATE_FAULT_KILL_BEFORE_CONFIG_RENAME: '1' });
    page = await unlocked(httpPort);
    const cut = await post(httpPort, '/configure/apply', page.cookie, { csrf: page.csrf, ...add('hema2', two, versionOf(old)) }).catch((err: Error) => err);
    expect(cut).toBeInstanceOf(Error);
    await until(() => !gateway.running, 5_000, 'the gateway to die');
    expect(readFileSync(instrumentsFile, 'utf8')).toBe(old);
    expect(readFileSync(`${instrumentsFile}.saving`, 'utf8')).toContain('hema2');

    // The next start reads the old configuration and runs; the change is made again and saves.
    await gateway.start();
    const health = await gateway.health();
    expect(health.body.instruments.map((i) => i.instrument)).toEqual(['hema1']);
    page = await unlocked(httpPort);
    const again = await post(httpPort, '/configure/apply', page.cookie, { csrf: page.csrf, ...add('hema2', two, versionOf(old)) });
    expect(again.status, again.body).toBe(200);
    await until(async () => (await gateway.health()).body.instruments.length === 2, 5_000, 'hema2 to start');
    expect(existsSync(`${instrumentsFile}.saving`)).toBe(false);
    expect(readFileSync(instrumentsFile, 'utf8')).toContain('hema2');
  });
});
