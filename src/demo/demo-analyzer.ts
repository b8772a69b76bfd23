// The emulated chemistry analyzer at the far end of the virtual line: sends one specimen per LIS01-A2 session
// with the production AstmEmulator (real frames, checksums, retransmission on NAK) and reports what the gateway
// made of it, from the driver's own events.
import { AstmEmulator, type EmulatorFaults } from '../../drivers/astm/emulator.js';
import { QueryingAnalyzer, type QueryOutcome } from '../../drivers/astm/emulator-query.js';
import { AnalyzerReceiver } from '../../drivers/astm/emulator-receiver.js';
import { systemClock } from '../clock.js';
import { type DriverEvent } from '../runner-contract.js';
import type { IngestSummary } from '../message.js';
import type { Specimen } from './specimens.js';
import type { VirtualSerialLine } from './virtual-serial-line.js';

/** What one specimen's transfer came to. */
export interface Transfer {
  summary: IngestSummary;
  /** Frames the gateway refused (NAK) because of a bad checksum, which the analyzer then sent again. */
  checksumErrors: number;
  retransmissions: number;
}

/** Sends specimens over the line and matches them with the gateway's commit events. */
export class DemoAnalyzer {
  private readonly events: DriverEvent[] = [];

  constructor(
    private readonly line: VirtualSerialLine,
    readonly instrumentId: string,
  ) {}

  /** Feed for the gateway's onDriverEvent. */
  readonly onDriverEvent = (instrument: string, event: DriverEvent): void => {
    if (instrument === this.instrumentId && event.kind !== 'bytes') this.events.push(event);
  };

  /** A host query for `accessions`: what the gateway answered within the analyzer's `deadlineMs`. */
  async query(accessions: readonly string[], deadlineMs: number): Promise<QueryOutcome> {
    const end = this.line.analyzer();
    const querying = new QueryingAnalyzer(
      new AstmEmulator(end, systemClock, { replyTimeoutMs: 5_000, maxRestarts: 1 }),
      new AnalyzerReceiver(end, systemClock),
      systemClock,
    );
    return querying.query(accessions, deadlineMs);
  }

  /** One session with one message; resolves once the gateway has committed it (it ACKs only after the commit). */
  async send(specimen: Specimen, faults: EmulatorFaults = {}): Promise<Transfer> {
    this.events.length = 0;
    const emulator = new AstmEmulator(this.line.analyzer(), systemClock, { faults, replyTimeoutMs: 5_000, maxRestarts: 1 });
    const outcome = await emulator.send([specimen.message]);
    if (outcome.kind !== 'sent') throw new Error(`the analyzer could not send ${specimen.accession}: ${outcome.reason}`);
    const committed = this.events.find((e): e is Extract<DriverEvent, { kind: 'message' }> => e.kind === 'message');
    if (!committed) {
      const why = this.events.map((e) => ('reason' in e ? e.reason : e.kind)).join('; ') || 'no commit event';
      throw new Error(`the gateway did not store ${specimen.accession}: ${why}`);
    }
    return {
      summary: committed.summary,
      checksumErrors: this.events.filter((e) => e.kind === 'checksum-error').length,
      retransmissions: outcome.retransmissions,
    };
  }
}
