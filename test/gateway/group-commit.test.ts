// Group commit across instruments: sixteen ASTM runners on fake transports completing messages at once share one
// transaction and one fsync, each is ACKed only once that fsync has returned, and a message whose own statements
// fail is NAKed alone while the others of its group are stored.
import { afterEach, describe, expect, it } from 'vitest';
import { createIngestPort } from '../../src/gateway/ingest-port.js';
import { GroupCommit } from '../../src/store/group-commit.js';
import type { Store } from '../../src/store/store.js';
import { harness, type Harness } from '../astm/harness.js';
import { bytes, frame } from '../astm/mnemonics.js';
import { options, profile } from '../astm/profile.js';
import { scratch } from '../store/store-fixtures.js';

const ACK = 0x06;
const NAK = 0x15;
const glucose = [{ code: 'GLU', loinc: '2345-7', unit: 'mmol/L' }];

/** A whole ASTM session from analyzer `k`: one message with one glucose result for `accession`. */
function session(accession: string): Buffer {
  const text = `H|\\^&|||Emu<CR>P|1<CR>O|1|${accession}<CR>R|1|^^^GLU|5.4|mmol/L||N||F||||20260101120000<CR>L|1|N<CR>`;
  return bytes('<ENQ>' + frame(1, text) + '<EOT>');
}

interface Rig {
  store: Store;
  group: GroupCommit;
  analyzers: Harness[];
  /** fsyncs that have returned, in order. */
  synced: () => number;
  /** Per analyzer, at each byte it was answered: whether its capture was stored and how many fsyncs had returned. */
  answers: { byte: number; stored: boolean; synced: number }[][];
  /** Resolves once every analyzer has been answered `count` times. */
  answered: (count: number) => Promise<void>;
}

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function rig(instruments: number, sync?: (store: Store) => Promise<void>, maxGroup = 16): Rig {
  const s = scratch();
  const store = s.open({ sinks: ['postgres', 'lims'] });
  cleanups.push(() => s.cleanup());
  let synced = 0;
  const group = new GroupCommit(store, {
    maxGroup,
    sync: async () => {
      await (sync ?? ((st: Store) => st.syncWal()))(store);
      synced++;
    },
  });
  const port = createIngestPort({ store, group, accepting: () => true, onCommitted: () => {}, log: { error: () => {} } });
  const hasCapture = store.db.prepare('SELECT COUNT(*) FROM captures WHERE instrument_id = ?').pluck();
  const answers: Rig['answers'] = [];
  const analyzers = Array.from({ length: instruments }, (_, k) => {
    const h = harness(profile(glucose, { id: `chem-${k}` }), options());
    h.setIngest(port);
    answers.push([]);
    h.transport.onWrite((d) => answers[k]!.push({ byte: d[0]!, stored: (hasCapture.get(`chem-${k}`) as number) > 0, synced }));
    return h;
  });
  const answered = async (count: number): Promise<void> => {
    for (let spin = 0; answers.some((a) => a.length < count); spin++) {
      if (spin > 2000) throw new Error(`not every analyzer was answered ${count} times: ${answers.map((a) => a.length).join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  return { store, group, analyzers, synced: () => synced, answers, answered };
}

describe('group commit across instruments', () => {
  it('sixteen messages completing at once are one transaction and one fsync; each ACK comes after that fsync', async () => {
    const r = rig(16);
    r.analyzers.forEach((h, k) => h.transport.emitData(session(`S${k}`)));
    await r.answered(2);
    expect(r.group.figures()).toEqual({ commits: 1, fsyncs: 1, messages: 16 });
    for (const [k, a] of r.answers.entries()) {
      // The ENQ's ACK, then the message's: only once its capture was stored and the fsync holding it had returned.
      expect(a, `chem-${k}`).toEqual([
        { byte: ACK, stored: false, synced: 0 },
        { byte: ACK, stored: true, synced: 1 },
      ]);
    }
    expect(r.store.counts().results).toBe(16);
    expect(r.store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(32);
  });

  it('a lone message is committed and made durable at once, in a group of one', async () => {
    const r = rig(2);
    r.analyzers[0]!.transport.emitData(session('S0'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.answers[0]!.map((a) => a.byte)).toEqual([ACK, ACK]);
    expect(r.group.figures()).toEqual({ commits: 1, fsyncs: 1, messages: 1 });
    // Messages completing while that one's fsync runs form the next group; the one alone after it is alone again.
    r.analyzers[1]!.transport.emitData(session('S1'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(r.group.figures()).toEqual({ commits: 2, fsyncs: 2, messages: 2 });
  });

  it('messages completing during a slow fsync are committed together meanwhile, and answered after the next fsync', async () => {
    let release: () => void = () => {};
    let slow = true;
    const r = rig(8, async (store) => {
      if (slow) await new Promise<void>((resolve) => (release = resolve));
      await store.syncWal();
    });
    r.analyzers[0]!.transport.emitData(session('S0'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    r.analyzers.slice(1).forEach((h, k) => h.transport.emitData(session(`S${k + 1}`)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Nothing answered while the first fsync has not returned, not even the first message, and nothing of it is
    // offered to a sink: committed is not yet durable.
    expect(r.answers.map((a) => a.length)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    // The seven others were committed meanwhile (their fsync comes after the first's): all held from the sinks.
    expect(r.store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(16);
    expect(r.store.outbox.nextDueAt('postgres')).toBeNull();
    expect(r.store.outbox.claimDue('lims', 10)).toEqual([]);
    slow = false;
    release();
    await r.answered(2);
    expect(r.group.figures()).toEqual({ commits: 2, fsyncs: 2, messages: 8 });
    expect(r.store.outbox.claimDue('postgres', 100)).toHaveLength(8);
    expect(r.answers.every((a) => a[1]!.synced === (a === r.answers[0] ? 1 : 2))).toBe(true);
    expect(r.answers.every((a) => a[1]!.byte === ACK && a[1]!.stored)).toBe(true);
  });

  it('at most maxGroup messages a transaction, one transaction per turn of the event loop, fsyncs overlapping them', async () => {
    const r = rig(16, undefined, 4);
    r.analyzers.forEach((h, k) => h.transport.emitData(session(`S${k}`)));
    await r.answered(2);
    const { commits, fsyncs, messages } = r.group.figures();
    expect([commits, messages]).toEqual([4, 16]);
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThanOrEqual(4);
    expect(r.answers.every((a) => a[1]!.byte === ACK && a[1]!.stored && a[1]!.synced >= 1)).toBe(true);
    expect(r.store.outbox.claimDue('postgres', 100)).toHaveLength(16);
  });

  it('one message whose statements fail is rolled back to its savepoint and NAKed alone; the rest of its group is stored', async () => {
    const r = rig(16);
    r.store.db.exec(`CREATE TEMP TRIGGER refuse BEFORE INSERT ON results WHEN NEW.accession = 'BAD'
      BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
    r.analyzers.forEach((h, k) => h.transport.emitData(session(k === 5 ? 'BAD' : `S${k}`)));
    await r.answered(2);
    expect(r.group.figures()).toEqual({ commits: 1, fsyncs: 1, messages: 16 });
    r.answers.forEach((a, k) => expect(a[1]!.byte, `chem-${k}`).toBe(k === 5 ? NAK : ACK));
    // Nothing of the refused message: not its capture (written before the failing result), not a row of it.
    const instruments = r.store.db.prepare('SELECT instrument_id FROM captures ORDER BY id').pluck().all();
    expect(instruments).toHaveLength(15);
    expect(instruments).not.toContain('chem-5');
    expect(r.store.counts().results).toBe(15);
    expect(r.store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(30);
  });

  it('a full disk in the middle of a group refuses every message of it, stores none of them, and the next group commits', async () => {
    const r = rig(16);
    // SQLITE_FULL from max_page_count on the store's connection rather than from a full file system: the point where it
    // strikes is then the same on every machine (the first page the database may not add), whatever the file system's
    // block size and SQLite's page cache do; a real full file system is the end-to-end suite's (test/e2e/card-fills).
    const written: string[] = [];
    r.store.db.function('written', (instrument: unknown) => void written.push(String(instrument)));
    r.store.db.exec(`CREATE TEMP TRIGGER written AFTER INSERT ON captures BEGIN SELECT written(NEW.instrument_id); END`);
    const pages = r.store.db.pragma('page_count', { simple: true }) as number;
    r.store.db.pragma(`max_page_count = ${pages + 1}`);
    r.analyzers.forEach((h, k) => h.transport.emitData(session(`S${k}`)));
    await r.answered(2);
    // Several messages of the group were written before the one that found no page.
    expect(written.length).toBeGreaterThan(1);
    expect(written.length).toBeLessThan(16);
    expect(r.group.figures()).toMatchObject({ commits: 0, messages: 0 });
    expect(r.answers.map((a) => a[1]!.byte)).toEqual(Array(16).fill(NAK));
    expect(r.store.db.prepare('SELECT COUNT(*) FROM captures').pluck().get()).toBe(0);
    expect(r.store.counts().results).toBe(0);
    expect(r.store.db.prepare('SELECT COUNT(*) FROM outbox').pluck().get()).toBe(0);
    // Space again: the analyzers send again and are stored.
    r.store.db.pragma('max_page_count = 1073741823');
    r.analyzers.forEach((h, k) => h.transport.emitData(session(`T${k}`)));
    await r.answered(4);
    expect(r.answers.map((a) => a[3]!.byte)).toEqual(Array(16).fill(ACK));
    expect(r.store.counts().results).toBe(16);
  });

  it('a store closed under queued messages refuses them; nothing throws out of the committer', async () => {
    const r = rig(1);
    r.store.close();
    const outcome = await r.group.commit({
      capture: { instrumentId: 'chem-0', protocol: 'astm', receivedAt: 0, raw: Buffer.from('x') },
      results: [],
      rejections: [],
    });
    expect(outcome.kind).toBe('failed');
  });

  it('an fsync that fails refuses the whole group: every analyzer keeps its message', async () => {
    const r = rig(4, async (store) => {
      await store.syncWal();
      throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    });
    r.analyzers.forEach((h, k) => h.transport.emitData(session(`S${k}`)));
    await r.answered(2);
    expect(r.answers.map((a) => a[1]!.byte)).toEqual([NAK, NAK, NAK, NAK]);
    expect(r.group.figures()).toEqual({ commits: 1, fsyncs: 0, messages: 4 });
  });
});
