// The far ends of the cables: ASTM messages for the project's emulator (drivers/astm/emulator.ts) and an HL7
// sender over TCP that waits for each acknowledgment like a real analyzer.
import { createConnection, type Socket } from 'node:net';
import { initialMllpState, mllpStep, type MllpState } from '../../drivers/hl7/mllp.js';
import { parseMessage, valueAt } from '../../drivers/hl7/parse.js';
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

/** One ASTM message (H..L, CR-terminated) with `results` results for `accession`, each its own key. */
export function astmMessage(accession: string, results: number): string {
  const records = ['H|\\^&|||Emu^1|||||||P|1|20260701120000', 'P|1', `O|1|${accession}`];
  for (let i = 0; i < results; i++) {
    records.push(`R|${i + 1}|^^^${astmCodes[i % astmCodes.length]}|${4 + i}.${i}|mmol/L||N||F||||2026070112${String(i).padStart(2, '0')}00`);
  }
  return [...records, 'L|1|N'].join('\r') + '\r';
}

/** An HL7 sender over TCP (MLLP): one message at a time, waiting for its acknowledgment like a real analyzer. */
export class Hl7TcpSender {
  private socket: Socket | undefined;
  private state: MllpState = initialMllpState;
  private waiting: ((code: string) => void) | undefined;

  constructor(private readonly port: number) {}

  /** Connects, retrying until the gateway listens (it may be restarting). */
  async connect(ms = 10_000): Promise<void> {
    await until(
      async () => {
        const socket = await new Promise<Socket | undefined>((resolve) => {
          const s = createConnection(this.port, '127.0.0.1');
          s.once('connect', () => resolve(s));
          s.once('error', () => resolve(undefined));
        });
        if (!socket) return false;
        this.attach(socket);
        return true;
      },
      ms,
      `a TCP connection to the gateway's HL7 port ${this.port}`,
    );
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
