// The emulated HL7 analyzer in query mode, in either dialect: it asks the host for a specimen's orders (QRY^Q02, or
// QBP^Q11), reads the answer (QCK^Q02 then DSR^Q03, or RSP^K11 then OML^O33) within its own deadline, accepts each
// order message (ACK^Q03, ORL^O34), runs exactly the tests it was sent and sends their results (ORU^R01, or OUL^R22),
// waiting for each acknowledgment. Work orders that arrive unasked (download) are accepted and kept. Over any link:
// a TCP socket or a serial port; with `orderLink`, an analyzer whose host connects back to its order port: the
// answers and work orders arrive there and are accepted there.
import { initialMllpState, mllpStep, type MllpState } from './mllp.js';
import { parseMessage, rawField, valueAt, type Hl7Message } from './parse.js';

/** The two dialects, as the instrument's options name them. */
export type EmulatedDialect = 'display-query' | 'law';

/** The far end of a cable: bytes out, bytes in. */
export interface AnalyzerLink {
  write(data: Buffer): unknown;
  onData(listener: (data: Buffer) => void): void;
}

/** What a query came to: `firstByteAfterMs` from the query's write to the answer's first byte. */
export type Hl7QueryOutcome = { kind: 'answered'; found: boolean; codes: string[]; firstByteAfterMs: number; completeAfterMs: number } | { kind: 'missed' };

/** One work order the analyzer received: its specimen and tests. */
export interface ReceivedOrder {
  accession: string;
  codes: string[];
}

interface Received {
  message: Hl7Message;
  type: string;
  firstByteAt: number;
  /** The link it came on, where it is accepted. */
  from: AnalyzerLink;
}

const wrap = (text: string): Buffer => Buffer.concat([Buffer.from([0x0b]), Buffer.from(text, 'latin1'), Buffer.from([0x1c, 0x0d])]);
const stamp = (at: number): string => new Date(at).toISOString().replace(/\D/g, '').slice(0, 14);

/** The analyzer. */
export class Hl7QueryingAnalyzer {
  private readonly states = new Map<AnalyzerLink, MllpState>();
  private chunkAt = 0;
  private readonly inbox: Received[] = [];
  private waiter: (() => void) | undefined;
  private sequence = 0;
  /** Work orders received outside a query (download mode), accepted. */
  readonly downloads: ReceivedOrder[] = [];
  /** When set, the next order message is neither accepted nor read (the analyzer stalls; a test kills the host). */
  stallNext: (() => void) | undefined;

  constructor(
    private readonly link: AnalyzerLink,
    readonly dialect: EmulatedDialect,
    private readonly now: () => number = Date.now,
  ) {
    link.onData((data) => this.onData(link, data));
  }

  /** A connection the host opened to this analyzer's order port: answers and work orders read and accepted on it. */
  orderLink(link: AnalyzerLink): void {
    link.onData((data) => this.onData(link, data));
  }

  /** Asks for `accession`'s orders; an answer not complete within `deadlineMs` of the query's last byte is missed. */
  async query(accession: string, deadlineMs: number): Promise<Hl7QueryOutcome> {
    this.inbox.length = 0;
    const controlId = `Q${++this.sequence}`;
    const at = this.now();
    const text =
      this.dialect === 'display-query'
        ? [
            `MSH|^~\\&|Emu|BS|||${stamp(at)}||QRY^Q02|${controlId}|P|2.3.1||||||ASCII|||`,
            `QRD|${stamp(at)}|R|D|${this.sequence}|||RD|${accession}|OTH|||T|`,
            `QRF|BS|${stamp(at)}|${stamp(at)}|||RCT|COR|ALL||`,
          ]
        : [
            `MSH|^~\\&|Emu|LAB|||${stamp(at)}||QBP^Q11^QBP_Q11|${controlId}|P|2.5.1|||NE|AL||UNICODE UTF-8|||LAB-27^IHE`,
            `QPD|WOS^Work Order Step^IHE_LABTF|T${this.sequence}|${accession}`,
            'RCP|I||R',
          ];
    // Timed from the write: over an in-memory link the host reads (and commits) the query within it.
    const sentAt = this.now();
    await this.link.write(wrap(text.join('\r') + '\r'));
    const deadline = sentAt + deadlineMs;
    const answer = await this.next(deadline, this.dialect === 'display-query' ? 'QCK' : 'RSP');
    if (!answer) return { kind: 'missed' };
    const qak = answer.message.segments.find((s) => s.id === 'QAK');
    const found = qak !== undefined && valueAt(qak, answer.message.delimiters, { field: 2, component: 1 }) === 'OK';
    if (!found) return { kind: 'answered', found, codes: [], firstByteAfterMs: answer.firstByteAt - sentAt, completeAfterMs: this.now() - sentAt };
    const order = await this.next(deadline, this.dialect === 'display-query' ? 'DSR' : 'OML');
    if (!order) return { kind: 'missed' };
    const read = this.accept(order);
    return { kind: 'answered', found, codes: read?.codes ?? [], firstByteAfterMs: answer.firstByteAt - sentAt, completeAfterMs: this.now() - sentAt };
  }

  /**
   * Sends results for exactly `codes` of `accession`, resulted at `resultedAt` (epoch ms, written as UTC wall time to the
   * second); resolves with the host's MSA-1, or 'none' within `ms`.
   */
  async sendResults(accession: string, codes: readonly string[], valueOf: (code: string) => string, ms = 10_000, resultedAt = this.now()): Promise<string> {
    const controlId = `R${++this.sequence}`;
    const at = stamp(resultedAt);
    const obx = codes.map((c, i) => `OBX|${i + 1}|NM|${c}^${c}^99EMU||${valueOf(c)}|mmol/L||N|||F|||${at}`);
    const text =
      this.dialect === 'display-query'
        ? [`MSH|^~\\&|Emu|BS|||${at}||ORU^R01|${controlId}|P|2.3.1||||0||ASCII|||`, 'PID|1', `OBR|1|${accession}||||${at}|${at}`, ...obx]
        : [
            `MSH|^~\\&|Emu|LAB|||${at}||OUL^R22^OUL_R22|${controlId}|P|2.5.1|||NE|AL||UNICODE UTF-8|||LAB-29^IHE`,
            'PID|1',
            `SPM|1|${accession}||SER`,
            ...codes.flatMap((c, i) => [`OBR|${i + 1}|||${c}^${c}^99EMU`, obx[i]!.replace(/^OBX\|\d+/, 'OBX|1')]),
          ];
    this.inbox.length = 0;
    await this.link.write(wrap(text.join('\r') + '\r'));
    const ack = await this.next(this.now() + ms, 'ACK');
    const msa = ack?.message.segments.find((s) => s.id === 'MSA');
    return msa ? valueAt(msa, ack!.message.delimiters, { field: 1, component: 1 }) : 'none';
  }

  /** The next message of `type` before `deadline` (epoch ms); unasked work orders are accepted as downloads meanwhile. */
  private async next(deadline: number, type: string): Promise<Received | undefined> {
    for (;;) {
      const i = this.inbox.findIndex((m) => m.type === type);
      if (i >= 0) return this.inbox.splice(i, 1)[0];
      const wait = deadline - this.now();
      if (wait <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.waiter = () => (clearTimeout(timer), resolve());
      });
    }
  }

  // Accepts an order message (ACK^Q03 for a DSR^Q03, ORL^O34 for an OML^O33) and reads its specimen and tests.
  private accept(received: Received): ReceivedOrder | undefined {
    if (this.stallNext) {
      const stalled = this.stallNext;
      this.stallNext = undefined;
      stalled();
      return undefined;
    }
    const { message } = received;
    const msh = message.segments[0]!;
    const controlId = rawField(msh, 10);
    const law = received.type === 'OML';
    const ack = law
      ? [`MSH|^~\\&|Emu|LAB|||${stamp(this.now())}||ORL^O34^ORL_O34|A${++this.sequence}|P|2.5.1`, `MSA|AA|${controlId}`]
      : [`MSH|^~\\&|Emu|BS|||${stamp(this.now())}||ACK^Q03|A${++this.sequence}|P|2.3.1`, `MSA|AA|${controlId}|Message accepted|||0`, 'ERR|0'];
    void received.from.write(wrap(ack.join('\r') + '\r'));
    return law ? readWorkOrder(message) : readDisplay(message);
  }

  private onData(from: AnalyzerLink, data: Buffer): void {
    const at = this.now();
    // The first byte of a message is the first chunk after the previous message ended.
    if (this.chunkAt === 0) this.chunkAt = at;
    const step = mllpStep(this.states.get(from) ?? initialMllpState, data, 1 << 24);
    this.states.set(from, step.state);
    for (const e of step.effects) {
      if (e.kind !== 'message') continue;
      const parsed = parseMessage(e.raw.toString('utf8'));
      if (parsed.kind !== 'message') continue;
      const type = valueAt(parsed.message.segments[0]!, parsed.message.delimiters, { field: 9, component: 1 });
      const received = { message: parsed.message, type, firstByteAt: this.chunkAt, from };
      this.chunkAt = 0;
      // A work order nobody asked for is a download: accepted at once.
      if (type === 'OML' && !this.waiter) {
        const read = this.accept(received);
        if (read) this.downloads.push(read);
      } else this.inbox.push(received);
    }
    if (step.state.phase !== 'idle') this.chunkAt ||= at;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}

/** A DSR^Q03's barcode (DSP-21) and tests (DSP-29 on, component 1). */
export function readDisplay(message: Hl7Message): ReceivedOrder {
  const d = message.delimiters;
  const lines = new Map(message.segments.filter((s) => s.id === 'DSP').map((s) => [Number(rawField(s, 1)), valueAt(s, d, { field: 3, component: 1 })]));
  const codes = [...lines].filter(([n, v]) => n >= 29 && v !== '').map(([, v]) => v);
  return { accession: lines.get(21) ?? '', codes };
}

/** An OML^O33's specimen (SPM-2) and tests (OBR-4.1 of each OBR). */
export function readWorkOrder(message: Hl7Message): ReceivedOrder {
  const d = message.delimiters;
  const spm = message.segments.find((s) => s.id === 'SPM');
  const codes = message.segments.filter((s) => s.id === 'OBR').map((s) => valueAt(s, d, { field: 4, component: 1 }));
  return { accession: spm ? valueAt(spm, d, { field: 2, component: 1 }) : '', codes };
}
