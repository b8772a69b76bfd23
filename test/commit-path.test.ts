// The one commit path every runner uses: a decoder that throws is a rejection that keeps the raw bytes, junk is
// counted and sampled, and an outcome that arrives later than the commit call (the shape of a group commit) is what
// each runner answers with, in the order the messages arrived.
import { describe, expect, it } from 'vitest';
import { createHl7Runner } from '../drivers/hl7/runner.js';
import { createLineRunner } from '../drivers/line/runner.js';
import { CommitPath, type CommitOutcome } from '../src/commit-path.js';
import type { InboundMessage } from '../src/message.js';
import type { IngestOutcome } from '../src/runner-contract.js';
import { harness } from './astm/harness.js';
import { bytes as astmBytes, frame } from './astm/mnemonics.js';
import { options, profile } from './astm/profile.js';
import { makeContext, settle } from './hl7/context.js';
import { mindrayBs } from './hl7/fixtures.js';
import { mllp } from './hl7/mnemonic.js';
import { loadLayout, spotchemReport } from './line/layouts.js';
import { bytes as lineBytes } from './hl7/mnemonic.js';

const summary = { captureId: 1, inserted: 0, absorbed: 0, conflicts: 0, rejected: 0 };

/** A port whose outcomes wait until the test releases them, as a commit shared with later messages would. */
function deferredPort() {
  const waiting: { message: InboundMessage; release: () => void }[] = [];
  const port = (message: InboundMessage): Promise<IngestOutcome> =>
    new Promise((resolve) => waiting.push({ message, release: () => resolve({ kind: 'committed', summary, rejections: message.rejections }) }));
  return { port, waiting };
}

describe('CommitPath', () => {
  it('journals a message whose decoder throws, rejected with the error name and none of its text', () => {
    const h = makeContext(mindrayBs.profile);
    const path = new CommitPath(h.ctx, 'hl7');
    const outcomes: CommitOutcome[] = [];
    path.commit(
      Buffer.from('MSH|secret'),
      () => {
        throw new RangeError('value 123-45-6789 out of range');
      },
      (o) => outcomes.push(o),
    );
    expect(h.ingest.messages).toHaveLength(1);
    expect(h.ingest.messages[0]!.capture.raw.toString()).toBe('MSH|secret');
    expect(h.ingest.messages[0]!.rejections).toEqual([{ reason: 'decoder error (RangeError): the message was kept raw for reprocessing' }]);
    expect(outcomes).toMatchObject([{ kind: 'committed' }]);
    expect(h.logs.join('\n')).not.toContain('123-45-6789');
    expect(h.events.map((e) => e.kind)).toEqual(['message']);
  });

  it('refuses while the store is not accepting, and reports a port that throws as unavailable', () => {
    const h = makeContext(mindrayBs.profile);
    const path = new CommitPath(h.ctx, 'hl7');
    const outcomes: CommitOutcome[] = [];
    h.setAccepting(false);
    path.commit(
      Buffer.from('x'),
      () => ({ results: [], rejections: [] }),
      (o) => outcomes.push(o),
    );
    h.setAccepting(true);
    h.ingest.mode = 'throw';
    path.commit(
      Buffer.from('x'),
      () => ({ results: [], rejections: [] }),
      (o) => outcomes.push(o),
    );
    expect(outcomes).toEqual([
      { kind: 'unavailable', reason: 'store not accepting' },
      { kind: 'unavailable', reason: 'ingest failed: SQLITE_FULL: database or disk is full' },
    ]);
    expect(h.events.map((e) => e.kind)).toEqual(['commit-failed', 'commit-failed']);
  });

  it('counts junk and journals the first of each interval, saying how many were only counted', () => {
    const h = makeContext(mindrayBs.profile);
    const path = new CommitPath(h.ctx, 'astm');
    const label = { event: 'not an ASTM message', one: 'astm input', many: 'inputs' };
    const sampled: boolean[] = [];
    for (let i = 0; i < 5; i++) path.junk(Buffer.from(`noise ${i}`), 'no H record', label, (s) => sampled.push(s));
    h.clock.advance(60_000);
    path.junk(Buffer.from('noise 5'), 'no H record', label, (s) => sampled.push(s));
    expect(sampled).toEqual([true, false, false, false, false, true]);
    expect(h.ingest.messages.map((m) => m.rejections[0]!.reason)).toEqual([
      'no H record',
      'no H record; 4 more inputs like it since the last sample were counted, not kept',
    ]);
    expect(h.events.filter((e) => e.kind === 'discarded')).toHaveLength(6);
  });

  it('waits for an outcome that comes later, and settles once it has come', async () => {
    const h = makeContext(mindrayBs.profile);
    const deferred = deferredPort();
    h.ctx.ingest = deferred.port;
    const path = new CommitPath(h.ctx, 'hl7');
    const outcomes: CommitOutcome[] = [];
    path.commit(
      Buffer.from('x'),
      () => ({ results: [], rejections: [] }),
      (o) => outcomes.push(o),
    );
    let settled = false;
    void path.settled().then(() => (settled = true));
    await settle();
    expect([outcomes, settled]).toEqual([[], false]);
    deferred.waiting[0]!.release();
    await settle();
    expect(outcomes).toMatchObject([{ kind: 'committed' }]);
    expect(settled).toBe(true);
  });
});

describe('runners over a port whose outcome comes later (the shape of a group commit)', () => {
  it('ASTM: the completing frame is answered only once the outcome has come', async () => {
    const h = harness(profile([]), options());
    const deferred = deferredPort();
    h.setIngest(deferred.port);
    h.transport.emitData(astmBytes(`<ENQ>${frame(1, 'H|\\\\^&<CR>L<CR>')}`));
    await settle();
    expect(h.trace).toEqual(['write 6', 'ingest']);
    deferred.waiting[0]!.release();
    await settle();
    expect(h.trace).toEqual(['write 6', 'ingest', 'write 6']);
  });

  it('HL7: two messages in one chunk are answered in order, each after its own outcome', async () => {
    const h = makeContext(mindrayBs.profile);
    const deferred = deferredPort();
    h.ctx.ingest = deferred.port;
    createHl7Runner(h.ctx, mindrayBs.options).start();
    h.transport.emitData(Buffer.concat([mllp(mindrayBs.payload), mllp(mindrayBs.payload.replace('|12|', '|13|'))]));
    await settle();
    expect([deferred.waiting.length, h.transport.written.length]).toEqual([1, 0]);
    deferred.waiting[0]!.release();
    await settle();
    expect([deferred.waiting.length, h.transport.written.length]).toEqual([2, 1]);
    deferred.waiting[1]!.release();
    await settle();
    expect(h.transport.written.map((w) => /MSA\|AA\|(\d+)/.exec(w.toString('latin1'))?.[1])).toEqual(['12', '13']);
  });

  it('line: reports reach the port one after another, in the order they were printed', async () => {
    const { profile: p, options: o } = loadLayout('arkray-spotchem-el.yaml');
    const h = makeContext(p);
    const deferred = deferredPort();
    h.ctx.ingest = deferred.port;
    const runner = createLineRunner(h.ctx, o);
    runner.start();
    for (const id of ['A1', 'A2']) h.transport.emitData(lineBytes(spotchemReport.replace('24K0231', id)));
    await settle();
    expect(deferred.waiting.map((w) => w.message.results[0]!.accession)).toEqual(['A1']);
    deferred.waiting[0]!.release();
    await settle();
    expect(deferred.waiting.map((w) => w.message.results[0]!.accession)).toEqual(['A1', 'A2']);
    deferred.waiting[1]!.release();
    await runner.stop();
  });
});
