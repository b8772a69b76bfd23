// A decoder that throws is a bug, and one message that makes it throw must not take the gateway, or any other
// instrument, down with it (invariants 2 and 7): through the gateway's own wiring (three instruments on TCP ports,
// the real store), each driver in turn gets a decoder that throws on one marked message, injected through the
// driver registry. The message is journaled raw and rejected with the error's name, the analyzer is answered as
// for a rejected message, and every instrument, the failing one included, goes on committing.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeAstmText } from '../../drivers/astm/decode.js';
import { decodeHl7Message } from '../../drivers/hl7/message.js';
import { normalizeReport } from '../../drivers/line/report.js';
import { systemClock } from '../../src/clock.js';
import { validateConfig } from '../../src/config/load.js';
import type { MessageDecoders } from '../../src/driver-registry.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { createLogger } from '../../src/logger.js';
import { astmCodes, astmInstrument, astmMessage, connectTcp, Hl7TcpSender } from '../e2e/analyzers.js';
import { freePort } from '../e2e/harness.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { loadLayout, spotchemReport } from '../line/layouts.js';
import { bytes, frame } from '../astm/mnemonics.js';
import { until } from '../fixtures/until.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MARK = 'BOOM';
const boom = (raw: Buffer | string): void => {
  if (raw.toString().includes(MARK)) throw new TypeError('a decoder bug');
};
const failing: Record<'astm' | 'hl7' | 'line', MessageDecoders> = {
  astm: { astm: (text, profile, options) => (boom(text), decodeAstmText(text, profile, options)) },
  hl7: { hl7: (raw, profile, options) => (boom(raw), decodeHl7Message(raw, profile, options)) },
  line: { line: (report, profile, options) => (boom(report.raw), normalizeReport(report, profile, options)) },
};

/** A socket to an instrument port that collects what the gateway answers. */
async function connect(port: number): Promise<{ socket: Socket; received: () => string }> {
  let text = '';
  const socket = await connectTcp(port);
  socket.on('error', () => {});
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  cleanups.push(() => void socket.destroy());
  return { socket, received: () => text };
}

/** Sends one ASTM message in one frame; resolves with the answer to its frame (ACK or NAK). */
async function sendAstm(link: { socket: Socket; received: () => string }, message: string): Promise<'ACK' | 'NAK'> {
  const before = link.received().length;
  const answers = (): string => link.received().slice(before);
  link.socket.write('\x05');
  await until(() => answers().length >= 1, 5_000, 'the ENQ answered');
  link.socket.write(bytes(frame(1, message.replace(/\r/g, '<CR>').replace(/\\/g, '\\'))));
  await until(() => answers().length >= 2, 5_000, 'the frame answered');
  link.socket.write('\x04');
  return answers()[1] === '\x06' ? 'ACK' : 'NAK';
}

async function startGateway(decoders: MessageDecoders) {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-decoder-failure-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const [astmPort, hl7Port, linePort] = [await freePort(), await freePort(), await freePort()];
  const tcp = (port: number) => ({ kind: 'tcp-server', host: '127.0.0.1', port });
  const line = loadLayout('arkray-spotchem-el.yaml');
  const parsed = validateConfig({
    gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 },
    instruments: [
      { ...astmInstrument('chem1', '/dev/null', astmCodes), transport: tcp(astmPort) },
      { id: 'bs240', driver: 'hl7', timezone: 'Europe/Vienna', transport: tcp(hl7Port), mapping: mindrayBs.profile.mapping, options: mindrayBs.options },
      { id: 'spotchem', driver: 'line', timezone: line.profile.timezone, transport: tcp(linePort), mapping: line.profile.mapping, options: line.options },
    ],
  });
  if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
  const log = createLogger({ level: 'fatal' });
  const gateway = new Gateway(parsed.config, { clock: systemClock, random: Math.random, log, decoders });
  const { httpPort } = await gateway.start();
  cleanups.push(() => gateway.stop());
  const astm = await connect(astmPort);
  const hl7 = new Hl7TcpSender(hl7Port);
  await hl7.connect();
  cleanups.push(() => hl7.close());
  const printer = await connect(linePort);
  await until(() => gateway.instruments.every((i) => i.supervisor.snapshot().state === 'connected'), 10_000, 'every instrument connected');
  const captures = (): { instrument: string; status: string; raw: Buffer; reasons: string }[] => {
    const db = new Database(join(dir, 'data', 'labgate.db'), { readonly: true });
    try {
      return db.prepare('SELECT instrument_id AS instrument, status, raw, reasons FROM captures ORDER BY id').all() as never;
    } finally {
      db.close();
    }
  };
  /** One good message to every instrument; resolves once all three are committed. */
  const everyoneSends = async (n: number): Promise<void> => {
    const before = captures().filter((c) => c.status === 'accepted').length;
    expect(await sendAstm(astm, astmMessage(`A${n}`, 2))).toBe('ACK');
    expect(await hl7.send(mindrayBs.payload.replace(/\|12\|/, `|1${n}|`).replace('20241029', `2024102${n}`))).toBe('AA');
    printer.socket.write(bytes(spotchemReport.replace('24K0231', `24K023${n}`)));
    await until(() => captures().filter((c) => c.status === 'accepted').length === before + 3, 10_000, 'three messages committed');
  };
  return { gateway, httpPort, astm, hl7, printer, captures, everyoneSends };
}

async function healthy(httpPort: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
  return res.status === 200;
}

describe('a decoder that throws on one message', () => {
  it('ASTM: the message is journaled raw and rejected, then its frame ACKed; every instrument goes on', async () => {
    const g = await startGateway(failing.astm);
    await g.everyoneSends(1);
    const bad = astmMessage(`${MARK}1`, 2);
    expect(await sendAstm(g.astm, bad)).toBe('ACK');
    const journaled = g.captures().find((c) => c.raw.toString('latin1').includes(MARK))!;
    expect(journaled).toMatchObject({ instrument: 'chem1', status: 'rejected' });
    expect(journaled.reasons).toContain('decoder error (TypeError)');
    expect(journaled.raw.toString('latin1')).toContain(bad.slice(0, 40));
    await g.everyoneSends(2);
    expect(await healthy(g.httpPort)).toBe(true);
  });

  it('HL7: the message is journaled raw and rejected, answered AE; every instrument goes on', async () => {
    const g = await startGateway(failing.hl7);
    await g.everyoneSends(1);
    const bad = mindrayBs.payload.replace('|GLU|', `|${MARK}|`);
    expect(await g.hl7.send(bad)).toBe('AE');
    const journaled = g.captures().find((c) => c.raw.toString('latin1').includes(MARK))!;
    expect(journaled).toMatchObject({ instrument: 'bs240', status: 'rejected', raw: Buffer.from(bad, 'latin1') });
    expect(journaled.reasons).toContain('decoder error (TypeError)');
    await g.everyoneSends(2);
    expect(await healthy(g.httpPort)).toBe(true);
  });

  it('line: the report is journaled raw and rejected; every instrument goes on', async () => {
    const g = await startGateway(failing.line);
    await g.everyoneSends(1);
    const bad = bytes(spotchemReport.replace('24K0231', `${MARK}1`));
    g.printer.socket.write(bad);
    await until(() => g.captures().some((c) => c.raw.toString('latin1').includes(MARK)), 10_000, 'the report journaled');
    const journaled = g.captures().find((c) => c.raw.toString('latin1').includes(MARK))!;
    expect(journaled).toMatchObject({ instrument: 'spotchem', status: 'rejected', raw: bad });
    expect(journaled.reasons).toContain('decoder error (TypeError)');
    await g.everyoneSends(2);
    expect(await healthy(g.httpPort)).toBe(true);
  });
});
