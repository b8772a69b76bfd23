import { describe, expect, test } from 'vitest';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
import { createHl7Runner } from '../../drivers/hl7/runner.js';
import { makeContext, settle } from './context.js';
import { lri251, mindrayBs, radiometerAbl, statusMessage } from './fixtures.js';
import { bytes, mllp } from './mnemonic.js';

/** The MSA-1 codes of everything written, in order. */
function ackCodes(written: Buffer[]): string[] {
  return written.map((frame) => {
    const text = frame.toString('latin1');
    expect(text.startsWith('\x0b') && text.endsWith('\x1c\r')).toBe(true);
    const parsed = parseMessage(text.slice(1, -2));
    if (parsed.kind !== 'message') throw new Error('not an ACK');
    const msa = parsed.message.segments.find((s) => s.id === 'MSA')!;
    return `${valueAt(msa, parsed.message.delimiters, { field: 1, component: 1, subcomponent: 1 })}:${valueAt(msa, parsed.message.delimiters, { field: 2, component: 1, subcomponent: 1 })}`;
  });
}

function started(fixture = mindrayBs, options = fixture.options) {
  const h = makeContext(fixture.profile);
  const runner = createHl7Runner(h.ctx, options);
  runner.start();
  return { ...h, runner };
}

describe('HL7 runner with bare framing (framing: none)', () => {
  test('a message ends at the next MSH or after idleMs of silence; its ACK is written bare', async () => {
    const h = started(mindrayBs, { ...mindrayBs.options, framing: 'none', idleMs: 300 });
    const second = mindrayBs.payload.replace('|12|P|', '|13|P|');
    h.transport.emitData(Buffer.from(mindrayBs.payload.slice(0, 40), 'latin1'));
    h.transport.emitData(Buffer.from(mindrayBs.payload.slice(40) + second.slice(0, 10), 'latin1'));
    await settle();
    expect(h.ingest.messages.map((m) => m.results.length)).toEqual([3]);
    h.transport.emitData(Buffer.from(second.slice(10), 'latin1'));
    await h.clock.advanceSettling(299);
    expect(h.ingest.messages).toHaveLength(1);
    await h.clock.advanceSettling(1);
    expect(h.ingest.messages.map((m) => m.capture.raw.toString('latin1'))).toEqual([mindrayBs.payload, second]);
    const written = h.transport.written.map((w) => w.toString('latin1'));
    expect(written.map((w) => [w.startsWith('MSH|'), w.includes('\x0b') || w.includes('\x1c'), /MSA\|AA\|1[23]\r/.exec(w)?.[0]])).toEqual([
      [true, false, 'MSA|AA|12\r'],
      [true, false, 'MSA|AA|13\r'],
    ]);
  });
});

describe('HL7 runner over the fake transport', () => {
  test('AA only after the commit, with MSH-10 echoed', async () => {
    const h = started();
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(h.timeline).toEqual(['commit 1', 'write']);
    expect(ackCodes(h.transport.written)).toEqual(['AA:12']);
    expect(h.ingest.messages[0]!.capture).toMatchObject({ instrumentId: 'bs240', protocol: 'hl7', raw: Buffer.from(mindrayBs.payload, 'latin1') });
    expect(h.ingest.messages[0]!.results).toHaveLength(3);
  });

  test('AE when results cannot be normalized; the message is still journaled with its rejections', async () => {
    const h = started();
    h.transport.emitData(mllp(mindrayBs.payload.replace('|GLU|', '|UREA|')));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AE:12']);
    expect(h.ingest.messages).toHaveLength(1);
    expect(h.ingest.messages[0]!.rejections.map((r) => r.reason)).toEqual(["unmapped test code 'UREA'"]);
  });

  test('AR and no commit while the store is not accepting; the resend is stored once', async () => {
    const h = started();
    h.setAccepting(false);
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AR:12']);
    expect(h.ingest.messages).toEqual([]);
    h.setAccepting(true);
    h.transport.emitData(mllp(mindrayBs.payload));
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AR:12', 'AA:12', 'AA:12']);
    expect(h.ingest.keys.size).toBe(3);
  });

  test.each(['unavailable', 'throw'] as const)('ingest %s → AR, never AA', async (mode) => {
    const h = started();
    h.ingest.mode = mode;
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AR:12']);
    expect(h.events).toContainEqual(expect.objectContaining({ kind: 'commit-failed' }));
  });

  test('enhanced mode: CA after commit (MSH-15 AL, MSH-16 NE)', async () => {
    const h = started(radiometerAbl);
    h.transport.emitData(mllp(radiometerAbl.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['CA:ABL-000318']);
    h.ingest.mode = 'unavailable';
    h.transport.emitData(mllp(radiometerAbl.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['CA:ABL-000318', 'CE:ABL-000318']);
  });

  test('enhanced mode: application ack only (MSH-15 NE, MSH-16 AL)', async () => {
    const h = started(lri251);
    h.transport.emitData(mllp(lri251.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AA:MSG-88213']);
  });

  test('a message type the driver does not read is journaled, rejected with its type and answered AE', async () => {
    const h = started(statusMessage);
    h.transport.emitData(mllp(statusMessage.payload));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AE:DXH-7782']);
    expect(h.ingest.messages[0]).toMatchObject({ results: [], rejections: [{ reason: 'message type ESU^U01 is not read' }] });
  });

  test('an oversize message is refused with AR from its MSH and never committed', async () => {
    const h = started(mindrayBs, { ...mindrayBs.options, maxMessageBytes: 1024 });
    const big = mindrayBs.payload + `NTE|1||${'x'.repeat(4000)}\r`;
    h.transport.emitData(mllp(big));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AR:12']);
    expect(h.ingest.messages).toEqual([]);
  });

  test('blocks that are not messages are refused (AR) and counted; one a minute is journaled as a sample', async () => {
    const h = started();
    for (let i = 0; i < 500; i++) h.transport.emitData(bytes(`<VT>not hl7 at all ${i}<FS><CR>`));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(Array(500).fill('AR:'));
    expect(h.events.filter((e) => e.kind === 'discarded')).toHaveLength(500);
    expect(h.ingest.messages.map((m) => m.capture.raw.toString('latin1'))).toEqual(['not hl7 at all 0']);
    expect(h.ingest.messages[0]!.rejections).toEqual([{ reason: 'not an HL7 message: message does not start with an MSH segment' }]);
    h.clock.advance(60_000);
    h.transport.emitData(bytes('<VT>\x16\x03\x01 a TLS hello<FS><CR>'));
    await settle();
    expect(h.ingest.messages).toHaveLength(2);
    expect(h.ingest.messages[1]!.rejections[0]!.reason).toMatch(/; 499 more blocks like it since the last sample were counted, not kept$/);
  });

  test('a block that starts with MSH is journaled every time, however broken the rest is', async () => {
    const h = started();
    for (let i = 0; i < 3; i++) h.transport.emitData(mllp(`MSH|^~\\&|X|Y|||20241029083015||ORU^R01|${i}|P|2.3.1\r%%%|garbage`));
    await settle();
    expect(h.ingest.messages).toHaveLength(3);
    expect(h.ingest.messages.every((m) => /not an HL7 message: segment 2/.test(m.rejections[0]?.reason ?? ''))).toBe(true);
    expect(ackCodes(h.transport.written)).toEqual(['AE:', 'AE:', 'AE:']);
  });

  test('byte-at-a-time delivery and noise between blocks', async () => {
    const h = started();
    const stream = Buffer.concat([bytes('<NUL>noise'), mllp(mindrayBs.payload), bytes('<LF>'), mllp(mindrayBs.payload.replace('|12|P|', '|13|P|'))]);
    for (const b of stream) h.transport.emitData(Buffer.from([b]));
    await settle();
    expect(ackCodes(h.transport.written)).toEqual(['AA:12', 'AA:13']);
  });

  test('patient demographics never reach the log', async () => {
    const h = started(radiometerAbl);
    h.transport.emitData(mllp(radiometerAbl.payload));
    h.ingest.mode = 'throw';
    h.transport.emitData(mllp(radiometerAbl.payload));
    await settle();
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.join('\n')).not.toMatch(/Doe|Jane|MRN-1/);
  });

  test('stop waits for queued writes and ignores later bytes', async () => {
    const h = started();
    h.transport.emitData(mllp(mindrayBs.payload));
    await h.runner.stop();
    expect(h.transport.written).toHaveLength(1);
    h.transport.emitData(mllp(mindrayBs.payload));
    await settle();
    expect(h.ingest.messages).toHaveLength(1);
  });
});
