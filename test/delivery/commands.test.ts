// The operator commands end to end through the CLI entry, on a real data directory.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { enqueue, sampleResult, states, testStore, type TestStore } from './fixture.js';

let s: TestStore;
let config: string;
beforeEach(() => {
  s = testStore();
  config = join(s.dir, 'labgate.yaml');
  writeFileSync(config, `gateway:\n  id: gw-1\n  dataDir: ${s.dir}\nsinks:\n  postgres:\n    url: postgres://loader@db.example:5432/lab\n    schema: lab\n`);
});
afterEach(() => s.close());

async function cli(args: string[], stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await main(args, { stdout, stderr, stdin: Readable.from([stdin]), env: {} });
  return { code, out, err };
}

function deadLetters(n: number): string[] {
  const keys = enqueue(
    s.db,
    'postgres',
    Array.from({ length: n }, (_, i) => sampleResult(i)),
    s.clock.now,
  );
  const rows = s.outbox.claimDue('postgres', n);
  s.outbox.recordOutcomes(
    'postgres',
    rows,
    rows.map(() => ({ kind: 'dead', reason: '22008: date/time field value out of range' })),
    rows.map(() => null),
  );
  return keys;
}

describe('operator commands', () => {
  it('status --json reports counts, oldest age and the time to drain', async () => {
    enqueue(s.db, 'postgres', [sampleResult(1), sampleResult(2)], Date.now() - 60_000);
    const { code, out } = await cli(['status', '--config', config, '--json']);
    expect(code).toBe(0);
    const doc = JSON.parse(out) as { gateway: string; sinks: Record<string, unknown>[] };
    expect(doc.gateway).toBe('gw-1');
    expect(doc.sinks).toEqual([expect.objectContaining({ sink: 'postgres', pending: 2, sent: 0, dead: 0, etaSeconds: null })]);
    expect(doc.sinks[0]!.oldestPendingAgeS).toBeGreaterThanOrEqual(59);
    expect(out).not.toMatch(/loader@|password/);
    expect((await cli(['status', '--config', config])).out).toMatch(/postgres:\n {2}pending 2, sent 0, dead 0/);
  });

  it('dead-letter lists, retries and purges (after confirmation), audited with the OS user', async () => {
    const keys = deadLetters(3);
    expect((await cli(['dead-letter', 'list', '--config', config])).out.split('\n').filter(Boolean)).toHaveLength(3);
    expect(await cli(['dead-letter', 'retry', '--config', config])).toMatchObject({ code: 2 });
    expect(await cli(['dead-letter', 'retry', '--config', config, '--key', keys[0]!])).toMatchObject({ code: 0, out: expect.stringMatching(/retrying 1/) });
    expect(await cli(['dead-letter', 'purge', '--config', config, '--all'], 'no\n')).toMatchObject({ code: 1 });
    expect(states(s.db, 'postgres')).toEqual({ pending: 1, dead: 2 });
    expect(await cli(['dead-letter', 'purge', '--config', config, '--sink', 'postgres'], 'yes\n')).toMatchObject({
      code: 0,
      out: expect.stringMatching(/purged 2/),
    });
    expect(states(s.db, 'postgres')).toEqual({ pending: 1 });
    const actions = s.db.prepare(`SELECT action FROM audit WHERE actor != 'gateway' ORDER BY id`).pluck().all();
    expect(actions).toEqual(['dead-letter-retry', 'dead-letter-purge', 'dead-letter-purge']);
  });

  it('pg-migrate --print prints an idempotent script for the configured schema', async () => {
    const { code, out } = await cli(['pg-migrate', '--config', config, '--print']);
    expect(code).toBe(0);
    expect(out).toMatch(/CREATE TABLE IF NOT EXISTS "lab"\.result_load \(/);
    expect(out).toMatch(/ON CONFLICT DO NOTHING/);
  });
});
