// The snapshot every polling browser shares lives two seconds on a clock that never steps: a wall clock stepped
// back two hours must not freeze the page on an old snapshot for two hours.
import { afterEach, describe, expect, it } from 'vitest';
import { WebServer } from '../../src/web/server.js';
import { statusPage } from '../../src/web/status/routes.js';
import { ManualClock } from '../fixtures/manual-clock.js';
import { FakeStatusSource } from './fake-source.js';
import { call, quiet } from './harness.js';

let server: WebServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('the shared status snapshot', () => {
  it('is read again after two seconds when the wall clock stepped back meanwhile', async () => {
    const clock = new ManualClock(Date.parse('2026-11-30T12:00:00Z'));
    const source = new FakeStatusSource(() => clock.now());
    let reads = 0;
    const snapshot = source.snapshot.bind(source);
    source.snapshot = () => (reads++, snapshot());
    const page = statusPage(source, { requireToken: false, now: () => clock.now(), monotonic: () => clock.monotonic(), snapshotCacheMs: 2_000, log: quiet });
    server = new WebServer({ host: '127.0.0.1', port: 0, log: quiet, guard: page.guard, routes: page.routes });
    const { port } = await server.start();
    expect((await call(port, 'GET', '/status.json')).status).toBe(200);
    expect(reads).toBe(1);
    clock.step(-2 * 3_600_000);
    clock.advance(2_001);
    await call(port, 'GET', '/status.json');
    expect(reads).toBe(2);
  });
});
