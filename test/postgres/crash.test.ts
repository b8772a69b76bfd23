// SIGKILL of a real delivery process between the PostgreSQL commit and the local "sent" mark: on restart the rows
// are due again without any manual step, are re-delivered, and PostgreSQL absorbs the replay (load_count 2,
// audit inserted + absorbed), never a second row. Runs the compiled code: `npm test` builds first.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { enqueue, sampleResult, states, testStore, type TestStore } from '../delivery/fixture.js';
import { audited, loaded, testDatabase, type TestDatabase } from './pg.js';

let db: TestDatabase;
let store: TestStore;
const child = join(import.meta.dirname, 'fixtures', 'drain-child.mjs');

beforeAll(async () => {
  db = await testDatabase();
  store = testStore();
});
afterAll(async () => {
  store.close();
  await db.close();
});

function run(fault: string | null): { exited: Promise<number | null>; said: (word: string) => Promise<void>; kill: () => void } {
  const env = { ...process.env, LABGATE_DB: join(store.dir, 'labgate.db'), LABGATE_PG_URL: db.url, LABGATE_PG_SCHEMA: db.schema, LABGATE_FAULT: fault ?? '' };
  const proc = spawn(process.execPath, [child], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const waiters: (() => void)[] = [];
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    waiters.forEach((w) => w());
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const said = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => out.includes(word) && resolve();
      waiters.push(check);
      check();
      void exited.then(() => (out.includes(word) ? resolve() : reject(new Error(`child exited without '${word}': ${out}`))));
    });
  return { exited, said, kill: () => proc.kill('SIGKILL') };
}

it('re-delivers after a SIGKILL between the PostgreSQL commit and the sent mark, and the replay is absorbed', async () => {
  const keys = enqueue(
    store.db,
    'postgres',
    Array.from({ length: 40 }, (_, i) => sampleResult(i)),
    Date.now() - 1_000,
  );

  const first = run('pause-after-commit');
  await first.said('committed');
  first.kill();
  await first.exited;
  expect(states(store.db, 'postgres')).toEqual({ pending: 40 });
  expect([...(await loaded(db)).values()].map((r) => r.load_count)).toEqual(Array(40).fill(1));

  const second = run(null);
  await second.said('done');
  expect(await second.exited).toBe(0);
  expect(states(store.db, 'postgres')).toEqual({ sent: 40 });
  const table = await loaded(db);
  const audit = await audited(db);
  expect(table.size).toBe(40);
  for (const key of keys) {
    expect(table.get(key)?.load_count).toBe(2);
    expect(audit.get(key)).toEqual(['inserted', 'absorbed']);
  }
});
