// SIGKILL in the middle of ingest, many times at random moments: after each kill the store holds every message
// whole or not at all (fixtures/ingest-loop.mjs defines message n; capture id n + 1 carries it).
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { kill9, spawnFixture, waitForLine } from './child.js';
import { scratch } from './store-fixtures.js';

const ROUNDS = 25;

/** What message n must have left behind, whole. */
function expected(n: number): { fresh: number; forwarded: number; audited: number; replays: boolean } {
  const fresh = 1 + (n % 20);
  const replays = n % 3 === 0 && n > 0;
  return { fresh, forwarded: 2 * (fresh - (n % 5 === 0 ? 1 : 0)), audited: fresh + (replays ? 1 : 0), replays };
}

function byCapture(store: Store, sql: string): Map<number, number> {
  const rows = store.db.prepare(sql).all() as { capture: number; n: number }[];
  return new Map(rows.map((r) => [r.capture, r.n]));
}

function verify(store: Store, lastCommitted: number, round: number): number {
  expect(store.db.pragma('integrity_check', { simple: true }), `round ${round}`).toBe('ok');
  const captures = store.db.prepare('SELECT id, result_count FROM captures ORDER BY id').all() as { id: number; result_count: number }[];
  // Every commit the child saw return is there: durable before the caller is told.
  expect(captures.length, `round ${round}`).toBeGreaterThanOrEqual(lastCommitted);
  const results = byCapture(store, 'SELECT capture_id AS capture, COUNT(*) AS n FROM results GROUP BY capture_id');
  const outbox = byCapture(
    store,
    `SELECT r.capture_id AS capture, COUNT(*) AS n FROM outbox o
    JOIN results r ON r.dedup_key = o.dedup_key GROUP BY r.capture_id`,
  );
  const audit = byCapture(store, `SELECT json_extract(detail, '$.captureId') AS capture, COUNT(*) AS n FROM audit GROUP BY 1`);
  const replayCount = store.db.prepare("SELECT load_count FROM results WHERE accession = ? AND analyte_loinc = '2800-0'").pluck();
  captures.forEach((capture, index) => {
    const n = capture.id - 1;
    const want = expected(n);
    const where = `round ${round}, capture ${capture.id}`;
    expect(capture.id, where).toBe(index + 1);
    expect(capture.result_count, where).toBe(want.audited);
    expect(results.get(capture.id), where).toBe(want.fresh);
    expect(outbox.get(capture.id) ?? 0, where).toBe(want.forwarded);
    expect(audit.get(capture.id), where).toBe(want.audited);
    if (want.replays) expect(replayCount.get(`C${n - 1}`), where).toBe(2);
  });
  // Nothing outside a journaled capture, and every load counted exactly once.
  const total = store.db.prepare('SELECT COUNT(*) AS results, SUM(load_count) AS loads FROM results').get() as { results: number; loads: number | null };
  expect(total.results, `round ${round}`).toBe(captures.reduce((sum, c) => sum + expected(c.id - 1).fresh, 0));
  expect(total.loads ?? 0, `round ${round}`).toBe(captures.reduce((sum, c) => sum + expected(c.id - 1).audited, 0));
  return captures.length;
}

describe('a gateway killed with SIGKILL in the middle of ingest', () => {
  it(`keeps every message whole or not at all (${ROUNDS} random kills)`, { timeout: 180_000 }, async () => {
    const s = scratch();
    try {
      let grew = 0;
      let previous = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        const child = spawnFixture('ingest-loop.mjs', [s.dataDir]);
        try {
          await waitForLine(child, 'ready');
          await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 120));
        } finally {
          await kill9(child);
        }
        const committed = child.lines.filter((l) => l.startsWith('committed ')).map((l) => Number(l.slice(10)));
        const store = s.open();
        const count = verify(store, committed.at(-1) ?? 0, round);
        if (count > previous) grew++;
        previous = count;
        store.close();
      }
      // The kills landed while the child was ingesting, not before it began.
      expect(grew).toBeGreaterThan(ROUNDS / 2);
    } finally {
      s.cleanup();
    }
  });
});
