// The far ends of the cables: ASTM messages for the project's emulator (drivers/astm/emulator.ts) and an HL7
// sender over TCP that waits for each acknowledgment like a real analyzer.
import { createConnection, type Socket } from 'node:net';
import type { AnalyzerLink } from '../../drivers/hl7/emulator-query.js';
import { initialMllpState, mllpStep, type MllpState } from '../../drivers/hl7/mllp.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
import type { TestSpecimen } from '../../src/lims-server/server.js';
import { mllp } from '../hl7/mnemonic.js';
import { until } from './harness.js';

/** An ASTM instrument on the cable's device end at 115200 baud. */
export function astmInstrument(id: string, device: string, codes: readonly string[]): object {
  return {
    id,
    driver: 'astm',
    timezone: 'UTC',
    transport: { kind: 'serial', path: device, baudRate: 115_200 },
    mapping: codes.map((code, i) => ({ code, loinc: `3000${i}-${i}`, unit: 'mmol/L' })),
  };
}

export const astmCodes = ['GLU', 'NA', 'K', 'CL', 'CRP'] as const;

/** The LOINC each of `astmCodes` maps to (astmInstrument, hl7Instrument), and one no code maps to (another instrument's test). */
export const loincOf = (code: string): string =>
  `3000${astmCodes.indexOf(code as (typeof astmCodes)[number])}-${astmCodes.indexOf(code as (typeof astmCodes)[number])}`;
export const OTHER_LOINC = '718-7';

/** Two or three of the instrument's tests for specimen i, now and then one it cannot run, and a patient. */
export function ordersOf(accession: string, i: number): TestSpecimen {
  const codes = [...new Set([astmCodes[i % 5]!, astmCodes[(i + 2) % 5]!, ...(i % 3 === 0 ? [astmCodes[(i + 4) % 5]!] : [])])];
  const orders = codes.map((code, j) => ({
    orderId: `${accession}-o${j}`,
    loinc: loincOf(code),
    orderedAt: '2026-07-01T08:00:00Z',
    ...(j === 0 && i % 2 === 0 ? { priority: 'stat' as const } : {}),
  }));
  if (i % 4 === 0) orders.push({ orderId: `${accession}-other`, loinc: OTHER_LOINC, orderedAt: '2026-07-01T08:00:00Z' });
  return { accession, orders, patient: { id: `P-${i}`, name: 'Doe^Jane', birthDate: '1970-01-02', sex: 'F' } };
}

/** The analyzer codes of a specimen's orders this instrument can run. */
export function expressibleCodes(specimen: TestSpecimen): string[] {
  return specimen.orders.filter((o) => o.loinc !== OTHER_LOINC).map((o) => astmCodes[Number(o.loinc[4])]!);
}

/** An HL7 instrument with the same codes and LOINCs as astmInstrument, on `transport`, with `options`. */
export function hl7Instrument(id: string, transport: object, options: object): object {
  return { id, driver: 'hl7', timezone: 'UTC', transport, mapping: astmCodes.map((code, i) => ({ code, loinc: `3000${i}-${i}`, unit: 'mmol/L' })), options };
}

/** One ASTM message (H..L, CR-terminated) with `results` results for `accession`, each its own key. */
export function astmMessage(accession: string, results: number): string {
  const records = ['H|\\^&|||Emu^1|||||||P|1|20260701120000', 'P|1', `O|1|${accession}`];
  for (let i = 0; i < results; i++) {
    records.push(`R|${i + 1}|^^^${astmCodes[i % astmCodes.length]}|${4 + i}.${i}|mmol/L||N||F||||2026070112${String(i).padStart(2, '0')}00`);
  }
  return [...records, 'L|1|N'].join('\r') + '\r';
}

/** Connects to the gateway's HL7 port, retrying until it listens (it may be starting or restarting). */
export async function connectTcp(port: number, ms = 10_000): Promise<Socket> {
  let socket: Socket | undefined;
  await until(
    async () => {
      socket = await new Promise<Socket | undefined>((resolve) => {
        const s = createConnection(port, '127.0.0.1');
        s.once('connect', () => resolve(s));
        s.once('error', () => resolve(undefined));
      });
      return socket !== undefined;
    },
    ms,
    `a TCP connection to the gateway's HL7 port ${port}`,
  );
  return socket!;
}

/** A TCP connection to the gateway's HL7 port as an emulator's link. */
export async function tcpLink(port: number, ms = 10_000): Promise<{ link: AnalyzerLink; close(): void }> {
  const socket = await connectTcp(port, ms);
  socket.on('error', () => {});
  return { link: { write: (d) => socket.write(d), onData: (l) => socket.on('data', l) }, close: () => socket.destroy() };
}

/** An HL7 sender over TCP (MLLP): one message at a time, waiting for its acknowledgment like a real analyzer. */
export class Hl7TcpSender {
  private socket: Socket | undefined;
  private state: MllpState = initialMllpState;
  private waiting: ((code: string) => void) | undefined;

  constructor(private readonly port: number) {}

  /** Connects, retrying until the gateway listens (it may be restarting). */
  async connect(ms = 10_000): Promise<void> {
    this.attach(await connectTcp(this.port, ms));
  }

  /** Sends one message; resolves with MSA-1 (AA, AE, AR...), or 'closed' when the connection ends without one. */
  send(payload: string, ms = 10_000): Promise<string> {
    const socket = this.socket;
    if (!socket || socket.destroyed) return Promise.resolve('closed');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no acknowledgment within ${ms} ms`)), ms);
      this.waiting = (code) => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(code);
      };
      socket.write(mllp(payload));
    });
  }

  close(): void {
    this.socket?.destroy();
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    this.state = initialMllpState;
    socket.on('error', () => {});
    socket.on('close', () => this.waiting?.('closed'));
    socket.on('data', (data: Buffer) => {
      const step = mllpStep(this.state, data, 1 << 20);
      this.state = step.state;
      for (const e of step.effects) if (e.kind === 'message') this.waiting?.(msaCode(e.raw));
    });
  }
}

function msaCode(raw: Buffer): string {
  const parsed = parseMessage(raw.toString('latin1'));
  if (parsed.kind !== 'message') return '?';
  const msa = parsed.message.segments.find((s) => s.id === 'MSA');
  return msa ? valueAt(msa, parsed.message.delimiters, { field: 1, component: 1, subcomponent: 1 }) : '?';
}
