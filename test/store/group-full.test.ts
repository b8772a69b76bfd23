// A full disk anywhere in a group commit's transaction: no message of the group is stored. SQLite answers
// SQLITE_FULL by rolling back the whole transaction, or, in a statement that writes several rows (a message's results,
// outbox rows, audit entries), by rolling back that statement alone; either way no message of the group is kept while
// another is refused. SQLITE_FULL comes from max_page_count on the store's connection: the database may grow by k pages
// and no more, so each k makes it strike at another point of the group, the same on every machine (a real full file
// system is test/e2e/card-fills.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { message, result, scratch } from './store-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

const GROUP = 16;
const RESULTS = 20;

describe('a group commit on a disk that fills', () => {
  it('stores none of the group wherever SQLITE_FULL strikes in it, not even the messages before that statement', () => {
    let inTheMiddle = 0;
    for (let k = 0; k <= 30; k++) {
      const s = scratch();
      cleanups.push(s.cleanup);
      const store = s.open();
      store.ingest(message([result(100_000)]));
      const written: number[] = [];
      store.db.function('written', (id: unknown) => void written.push(Number(id)));
      store.db.exec(`CREATE TEMP TRIGGER written AFTER INSERT ON captures BEGIN SELECT written(NEW.id); END`);
      store.db.pragma(`max_page_count = ${(store.db.pragma('page_count', { simple: true }) as number) + k}`);
      const group = Array.from({ length: GROUP }, (_, m) => message(Array.from({ length: RESULTS }, (_, i) => result(m * 100 + i))));
      let outcome: string;
      try {
        const each = store.ingestGroup(group);
        outcome = `stored ${each.filter((r) => !(r instanceof Error)).length} of ${GROUP}`;
      } catch (err) {
        outcome = `none (${(err as { code?: string }).code})`;
        if (written.length > 1) inTheMiddle++;
      }
      const captures = store.db.prepare('SELECT COUNT(*) FROM captures').pluck().get() as number;
      const results = store.db.prepare('SELECT COUNT(*) FROM results').pluck().get() as number;
      // Too little room for the whole group at every k here: none of it is stored, and nothing of it half.
      expect([outcome, captures, results], `max_page_count + ${k}`).toEqual([expect.stringMatching(/^none \(SQLITE_FULL\)$|^stored 0 of/), 1, 1]);
      // The store takes the next message once there is room again.
      store.db.pragma('max_page_count = 1073741823');
      expect(store.ingest(message([result(200_000)])).inserted).toBe(1);
    }
    // SQLITE_FULL struck after several messages of the group had been written, at many a k.
    expect(inTheMiddle).toBeGreaterThan(10);
  });
});
