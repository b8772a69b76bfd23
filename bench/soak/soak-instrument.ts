// One analyzer of the soak on its socat cable: sends a message of five results at a steady pace, waits for each
// ACK, and re-sends a message it got no ACK for (a pulled cable, a NAK) as a real analyzer does, so a re-send is a
// replay the gateway must absorb. What was ACKed is kept by accession to be found in both sinks at the end.
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { systemClock } from '../../src/clock.js';
import { dedupKey } from '../../src/result.js';
import type { SerialTransport } from '../../src/transport/serial.js';
import { astmCodes, astmInstrument, astmMessage } from '../../test/e2e/analyzers.js';
import { Cable, sleep } from '../../test/e2e/harness.js';

/** Results per message (astmMessage gives result i the code astmCodes[i] and the time 12:0i:00 UTC). */
export const PER_MESSAGE = 5;

/** The dedup keys of one of our messages, as the gateway computes them with astmInstrument's mapping. */
export function messageKeys(instrument: string, accession: string): string[] {
  return Array.from({ length: PER_MESSAGE }, (_, i) =>
    dedupKey({ accession, analyteLoinc: `3000${i}-${i}`, instrumentId: instrument, resultedAt: `2026-07-01T12:0${i}:00Z` }),
  );
}

/** An analyzer on a socat cable in `dir`. */
export class SoakInstrument {
  readonly cable: Cable;
  /** Accessions whose message was ACKed. */
  readonly acked: string[] = [];
  sessions = 0;
  unacked = 0;
  unplugs = 0;
  private port: SerialTransport | undefined;
  private emulator: AstmEmulator | undefined;
  private plugged = false;

  constructor(
    readonly id: string,
    dir: string,
  ) {
    this.cable = new Cable(dir);
  }

  /** The instrument's entry in the gateway's configuration. */
  config(): object {
    return astmInstrument(this.id, this.cable.device, astmCodes);
  }

  get isPlugged(): boolean {
    return this.plugged;
  }

  async plug(): Promise<void> {
    await this.cable.plug();
    this.port = await this.cable.openAnalyzer();
    this.emulator = new AstmEmulator(this.port, systemClock, { maxFrameBytes: 247, replyTimeoutMs: 3_000, maxRestarts: 0, busyRetryMs: 1_000 });
    this.plugged = true;
  }

  /** Pulls the cable (socat killed: both ends see the line drop), whatever is in flight. */
  async unplug(): Promise<void> {
    this.plugged = false;
    this.unplugs++;
    await this.cable.unplug();
    await this.port?.close().catch(() => {});
    this.port = undefined;
    this.emulator = undefined;
  }

  /** Sends until `running()` is false: one message every `intervalMs`, starting after `offsetMs`. */
  async sendLoop(intervalMs: number, offsetMs: number, running: () => boolean): Promise<void> {
    await sleep(offsetMs);
    let pending: string | undefined;
    for (let n = 1; running();) {
      const emulator = this.emulator;
      if (!this.plugged || !emulator) {
        await sleep(200);
        continue;
      }
      const accession = pending ?? `${this.id.toUpperCase()}-${n++}`;
      const started = Date.now();
      this.sessions++;
      const outcome = await emulator.send([astmMessage(accession, PER_MESSAGE)]).catch((err: Error) => ({ kind: 'aborted' as const, reason: err.message }));
      if (outcome.kind === 'sent') {
        this.acked.push(accession);
        pending = undefined;
      } else {
        this.unacked++;
        pending = accession;
      }
      await sleep(Math.max(0, intervalMs - (Date.now() - started)));
    }
  }

  /** Every key the gateway ACKed. */
  ackedKeys(): string[] {
    return this.acked.flatMap((a) => messageKeys(this.id, a));
  }
}
