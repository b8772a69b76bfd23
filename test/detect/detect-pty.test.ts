// Detection end to end over a socat pseudo-terminal with the native serialport binding. A pty passes bytes whatever
// rate either end sets, so the cable here is a line model: each burst the analyzer sends goes through the software
// UART (uart.ts) from the analyzer's setting to the setting the gateway last opened its end at (recorded from the
// port factory the gateway was given), and what a receiver at that setting would read is what enters the pty. The
// analyzer's end records every byte that comes back: detection must never write one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { afterEach, describe, expect, it } from 'vitest';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { DetectingPort } from '../../src/detect/detecting-port.js';
import type { SerialSetting } from '../../src/detect/setting.js';
import { systemClock } from '../../src/clock.js';
import { silentLog, type Log } from '../../src/log.js';
import { openListening, type SerialPortOptions } from '../../src/transport/endpoint.js';
import type { SerialTransport } from '../../src/transport/serial.js';
import { Cable, until } from '../e2e/harness.js';
import { samples } from './samples.js';
import { reframe } from './uart.js';

const quiet: Log = silentLog;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The analyzer's end of the cable and the line model between it and the gateway's end. */
async function rig(sender: SerialSetting): Promise<{ port: DetectingPort; analyzer: SerialTransport; send: (data: Buffer) => Promise<void>; heard: Buffer[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-detect-'));
  const cable = new Cable(dir);
  await cable.plug();
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => cable.unplug(),
  );
  let receiver: SerialSetting | null = null;
  const recording = (options: SerialPortOptions): SerialPort => {
    receiver = { baudRate: options.baudRate, dataBits: options.dataBits as 7 | 8, parity: options.parity as SerialSetting['parity'] };
    return new SerialPort(options);
  };
  const analyzer = await cable.openAnalyzer(sender.baudRate);
  cleanups.push(() => analyzer.close());
  const heard: Buffer[] = [];
  analyzer.onData((d) => heard.push(d));
  const port = new DetectingPort({
    instrument: 'new1',
    path: cable.device,
    driver: 'auto',
    scope: { baudRate: 'auto', dataBits: 'auto', parity: 'auto' },
    open: (setting, signal) => openListening(cable.device, setting, recording, signal),
    clock: systemClock,
    log: quiet,
    timing: { gapMs: 150, silenceMs: 1_500 },
  });
  cleanups.push(() => port.stop());
  const send = async (data: Buffer): Promise<void> => {
    const read = receiver === null ? Buffer.alloc(0) : reframe(data, sender, receiver);
    if (read.length > 0) await analyzer.write(read);
  };
  return { port, analyzer, send, heard };
}

/** Sends `burst` every `ms` until stopped. */
function every(ms: number, burst: () => Promise<unknown>): () => void {
  let on = true;
  void (async () => {
    while (on) {
      await burst().catch(() => undefined);
      await new Promise((r) => setTimeout(r, ms));
    }
  })();
  return () => (on = false);
}

async function found(port: DetectingPort): Promise<ReturnType<DetectingPort['finding']>> {
  await until(
    () => port.finding().state === 'found' && /every/.test(port.finding().summary),
    60_000,
    `detection to find the setting (${port.finding().summary})`,
  );
  return port.finding();
}

const rates = [9600, 115_200];

describe('detection over a socat pseudo-terminal', () => {
  it.each(rates)('an ASTM analyzer at %i 8N1 (the emulator, waiting for an answer that never comes)', async (baudRate) => {
    const sender: SerialSetting = { baudRate, dataBits: 8, parity: 'none' };
    const { port, send, heard } = await rig(sender);
    port.start();
    // The project's ASTM emulator as the analyzer: ENQ, no reply within its timeout, EOT, ENQ again.
    let unplugged = false;
    cleanups.push(() => void (unplugged = true));
    const line = { write: (d: Buffer) => (unplugged ? Promise.reject(new Error('unplugged')) : send(d)), onData: () => {} };
    const emulator = new AstmEmulator(line, systemClock, { replyTimeoutMs: 400, maxRestarts: 1_000 });
    void emulator.send([Buffer.from(samples.bareAstm)]).catch(() => undefined);
    const finding = await found(port);
    expect(finding.summary).toMatch(new RegExp(`^ASTM at ${baudRate} 8N1: ENQ every \\d+ ms$`));
    expect(finding.yaml).toContain(`  baudRate: ${baudRate}`);
    expect(finding.yaml).toContain('driver: astm');
    await port.stop();
    expect(Buffer.concat(heard)).toEqual(Buffer.alloc(0));
  });

  it.each(rates)('an HL7 analyzer at %i 8N1 resending its message', async (baudRate) => {
    const { port, send, heard } = await rig({ baudRate, dataBits: 8, parity: 'none' });
    port.start();
    cleanups.push(every(500, () => send(samples.hl7)));
    const finding = await found(port);
    expect(finding.summary).toMatch(new RegExp(`^HL7 over MLLP at ${baudRate} 8N1: \\d+ messages so far, one every \\d+ ms$`));
    await port.stop();
    expect(Buffer.concat(heard)).toEqual(Buffer.alloc(0));
  });

  it.each(rates)('a printer at %i 8N1', async (baudRate) => {
    const { port, send, heard } = await rig({ baudRate, dataBits: 8, parity: 'none' });
    port.start();
    cleanups.push(every(500, () => send(samples.printer)));
    const finding = await found(port);
    expect(finding.summary).toMatch(
      new RegExp(`^A printer \\(lines of text\\) at ${baudRate} 8N1: 6 lines in the last burst, ending CR LF; a burst every \\d+ ms$`),
    );
    expect(finding.yaml.slice(0, 1)).toEqual(['driver: line']);
    await port.stop();
    expect(Buffer.concat(heard)).toEqual(Buffer.alloc(0));
  });

  it('an ASTM analyzer at 19200 7E1: bit 7 of its EOT carries the parity, so 7E1 is tried and found', async () => {
    const { port, send, heard } = await rig({ baudRate: 19_200, dataBits: 7, parity: 'even' });
    port.start();
    cleanups.push(every(400, () => send(Buffer.from([0x04, 0x05]))));
    const finding = await found(port);
    expect(finding.summary).toMatch(/^ASTM at 19200 7E1: ENQ every \d+ ms$/);
    expect(finding.yaml).toEqual(expect.arrayContaining(['  dataBits: 7', '  parity: even']));
    expect(finding.trials.find((t) => t.setting === '19200 8N1')?.why).toBe('bit 7 is a parity bit: trying 19200 7E1');
    await port.stop();
    expect(Buffer.concat(heard)).toEqual(Buffer.alloc(0));
  });
});
