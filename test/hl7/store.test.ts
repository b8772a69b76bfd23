// The HL7 runner over the real store (SQLite in a temporary directory): AA follows a durable commit,
// a resend is absorbed by the key, a rejected message is journaled with its raw bytes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import type { IngestPort } from '../../src/runner-contract.js';
import { openStore, type Store } from '../../src/store/store.js';
import { makeContext, settle } from './context.js';
import { lri251, mindrayBs } from './fixtures.js';
import { mllp } from './mnemonic.js';

const cleanups: (() => void)[] = [];
afterEach(() =>
  cleanups
    .splice(0)
    .reverse()
    .forEach((c) => c()),
);

function storeFixture(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-hl7-store-'));
  const store = openStore({ dataDir: dir, sinks: ['postgres', 'lims'], now: () => Date.UTC(2024, 9, 29, 12) });
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => store.close(),
  );
  return store;
}

const portOver =
  (store: Store): IngestPort =>
  (message) => {
    try {
      return { kind: 'committed', summary: store.ingest(message), rejections: message.rejections };
    } catch (error) {
      return { kind: 'unavailable', reason: (error as Error).message };
    }
  };

test('HL7 into the real store: stored once, rejected messages journaled raw', async () => {
  const store = storeFixture();
  const h = makeContext(mindrayBs.profile);
  const summaries: unknown[] = [];
  const runner = createHl7Runner({ ...h.ctx, ingest: portOver(store), onEvent: (e) => e.kind === 'message' && summaries.push(e.summary) }, mindrayBs.options);
  runner.start();
  h.transport.emitData(mllp(mindrayBs.payload));
  h.transport.emitData(mllp(mindrayBs.payload));
  const bad = mindrayBs.payload.replace('|GLU|', '|UREA|').replace('|12|P|', '|14|P|');
  h.transport.emitData(mllp(bad));
  await settle();
  expect(summaries).toEqual([
    expect.objectContaining({ inserted: 3, absorbed: 0, rejected: 0 }),
    expect.objectContaining({ inserted: 0, absorbed: 3, rejected: 0 }),
    expect.objectContaining({ inserted: 0, absorbed: 2, rejected: 1 }),
  ]);
  const rejected = store.rejectedCaptures(10);
  expect(rejected).toHaveLength(1);
  expect(store.captureRaw(rejected[0]!.id)?.toString('latin1')).toBe(bad);
  await runner.stop();
});

test('OBX-18 equipment travels as provenance through the store without touching the key', async () => {
  const store = storeFixture();
  const h = makeContext(lri251.profile);
  const runner = createHl7Runner({ ...h.ctx, ingest: portOver(store) }, lri251.options);
  runner.start();
  h.transport.emitData(mllp(lri251.payload));
  h.transport.emitData(mllp(lri251.payload.replaceAll('ATL-01', 'ATL-09')));
  await settle();
  expect(store.openConflicts(10)).toEqual([]);
  await runner.stop();
});
