import { describe, expect, test } from 'vitest';
import { createLineRunner } from '../../drivers/line/runner.js';
import { makeContext, settle } from '../hl7/context.js';
import { bytes } from '../hl7/mnemonic.js';
import { clinitekReport, loadLayout, spotchemReport } from './layouts.js';

function started(file: string) {
  const { profile, options } = loadLayout(file);
  const h = makeContext(profile);
  const runner = createLineRunner(h.ctx, options);
  runner.start();
  return { ...h, runner, options };
}

describe('line runner over the fake transport', () => {
  test('SPOTCHEM: the ETX line commits the report as one message, byte-exact', async () => {
    const h = started('arkray-spotchem-el.yaml');
    const raw = bytes(spotchemReport);
    for (let i = 0; i < raw.length; i += 7) h.transport.emitData(raw.subarray(i, i + 7));
    await settle();
    expect(h.ingest.messages).toHaveLength(1);
    expect(h.ingest.messages[0]!.capture).toMatchObject({ instrumentId: 'spotchem-el', protocol: 'line', raw });
    expect(h.ingest.messages[0]!.results.map((r) => r.analyteLoinc)).toEqual(['2951-2', '2823-3', '2075-0']);
    expect(h.transport.written).toEqual([]);
  });

  test('CLINITEK: the idle gap ends the report; nothing is committed before it', async () => {
    const h = started('siemens-clinitek-status.yaml');
    h.transport.emitData(bytes(clinitekReport));
    await settle();
    expect(h.ingest.messages).toEqual([]);
    h.clock.advance(2999);
    expect(h.ingest.messages).toEqual([]);
    h.clock.advance(1);
    expect(h.ingest.messages).toHaveLength(1);
    expect(h.ingest.messages[0]!.results).toHaveLength(10);
    expect(h.clock.pending).toBe(0);
  });

  test('a report the store cannot take is held and retried in order, never half-stored', async () => {
    const h = started('arkray-spotchem-el.yaml');
    h.ingest.mode = 'throw';
    h.transport.emitData(bytes(spotchemReport));
    h.setAccepting(false);
    h.transport.emitData(bytes(spotchemReport.replace('24K0231', '24K0232')));
    await settle();
    expect(h.ingest.messages).toEqual([]);
    expect(h.events).toContainEqual(expect.objectContaining({ kind: 'commit-failed' }));
    h.ingest.mode = 'ok';
    h.clock.advance(5000);
    expect(h.ingest.messages).toEqual([]);
    h.setAccepting(true);
    h.clock.advance(5000);
    expect(h.ingest.messages.map((m) => m.results[0]!.accession)).toEqual(['24K0231', '24K0232']);
    expect(h.clock.pending).toBe(0);
  });

  test('the retry queue is bounded', async () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const h = makeContext(profile);
    const runner = createLineRunner(h.ctx, { ...options, maxPendingReports: 2 });
    runner.start();
    h.setAccepting(false);
    for (const id of ['A1', 'A2', 'A3']) h.transport.emitData(bytes(spotchemReport.replace('24K0231', id)));
    await settle();
    h.setAccepting(true);
    h.clock.advance(5000);
    expect(h.ingest.messages.map((m) => m.results[0]!.accession)).toEqual(['A2', 'A3']);
    expect(h.logs.some((l) => l.includes('line report dropped'))).toBe(true);
  });

  test('stray lines are counted; a babbling port without line ends never grows the buffer', async () => {
    const h = started('arkray-spotchem-el.yaml');
    h.transport.emitData('SELF TEST OK\n');
    h.transport.emitData(Buffer.alloc(40_000, 0x41));
    h.transport.emitData(bytes(`<LF>${spotchemReport}`));
    await settle();
    // The LF after the run ends that over-long line: it is dropped whole, reported once.
    expect(h.events.filter((e) => e.kind === 'discarded').map((e) => (e as { reason: string }).reason)).toEqual([
      '13-byte line outside a report',
      `line longer than ${h.options.maxLineBytes} bytes`,
    ]);
    expect(h.ingest.messages).toHaveLength(1);
  });

  test('stop commits an open report rather than dropping it', async () => {
    const h = started('siemens-clinitek-status.yaml');
    h.transport.emitData(bytes(clinitekReport));
    await settle();
    await h.runner.stop();
    expect(h.ingest.messages).toHaveLength(1);
    expect(h.clock.pending).toBe(0);
  });
});
