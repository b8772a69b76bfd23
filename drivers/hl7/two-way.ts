// Two-way HL7 for one instrument: the shared courier (src/orders/courier.ts) answers host queries through the order
// desk and polls downloads; this part writes its tickets in the instrument's dialect and hears the analyzer's
// acknowledgments. display-query: QRY^Q02 → QCK^Q02 (QAK OK or NF), then one DSR^Q03 per specimen, each accepted by
// an ACK^Q03. law: QBP^Q11 → RSP^K11 (QAK OK or NF), then one OML^O33 per specimen, each accepted by an ORL^O34; a
// download is an OML^O33 alone. What the analyzer holds is recorded only once it accepted every message of the ticket.
// Answers are written with the query's own delimiters and charset; nothing here logs an identifier or patient data.
import { carries, type Charset } from '../../src/charset.js';
import type { Clock } from '../../src/clock.js';
import type { Log } from '../../src/log.js';
import { keepWritable } from '../../src/orders/answer.js';
import { OrdersCourier, type Written } from '../../src/orders/courier.js';
import type { OrderDesk, Ticket } from '../../src/orders/desk.js';
import type { InstrumentSpecimen } from '../../src/orders/order.js';
import type { DriverEvent } from '../../src/runner-contract.js';
import { acknowledgmentOf } from './accepted.js';
import { defaultDelimiters } from './delimiters.js';
import { displayResponse, queryAcknowledgment } from './display-query.js';
import type { SegmentValue } from './encode.js';
import { readHeader, type MessageHeader } from './header.js';
import type { Hl7Decoding } from './message.js';
import type { Hl7Options } from './options.js';
import { parseMessage, type Hl7Message } from './parse.js';
import { framed, type Replies } from './reply.js';
import { queryResponse, workOrder } from './work-order.js';

/** What two-way needs from the runner: its one write chain. */
export interface Hl7TwoWayDeps {
  desk: OrderDesk;
  options: Hl7Options;
  clock: Clock;
  log: Log;
  onEvent(event: DriverEvent): void;
  /** Writes framed messages in order, after whatever the runner wrote before (acknowledgments included). */
  send(replies: Replies): void;
  /** Why nothing can be written now (the analyzer's order port is down), else null; absent: always writable. */
  unavailable?(): string | null;
}

/** How an answer is written back to the analyzer that asked: its query, the query's header and charset. */
export interface Hl7Reply {
  message: Hl7Message;
  header: MessageHeader;
  charset: Charset;
}

/** Bytes an analyzer's acknowledgment may take (its MSH, MSA and a few ERR). */
const ACKNOWLEDGMENT_BYTES = 64 * 1024;

// The analyzer's acceptance of a DSR^Q03 (ACK^Q03) or an OML^O33 (ORL^O34; some send a plain ACK).
const acknowledgmentTypes = ['ACK', 'ORL'];

/** One instrument's HL7 queries and downloads. */
export class Hl7TwoWay {
  private readonly courier: OrdersCourier<Hl7Reply>;
  /** Our MSH-10 of each message the analyzer is to accept → the ticket and the specimen it carries. */
  private readonly awaited = new Map<string, { ticket: string; accession: string }>();
  /** Each ticket on its way → its messages not yet accepted, and the specimens of those accepted. */
  private readonly open = new Map<string, { left: number; accepted: Set<string> }>();
  // MSH-10 is at most 20 characters: a run's base (its start in base 36) and a sequence keep ids apart across restarts.
  private readonly idBase: string;
  private sequence = 0;

  constructor(private readonly deps: Hl7TwoWayDeps) {
    this.idBase = `LG${deps.clock.now().toString(36).slice(-8)}`;
    this.courier = new OrdersCourier<Hl7Reply>({
      desk: deps.desk,
      options: deps.options.orders,
      clock: deps.clock,
      log: deps.log,
      writable: (answer, reply) =>
        keepWritable(
          answer,
          (s) => this.identifiers(s),
          (value) => carries(value, this.charsetOf(reply)),
        ),
      write: (ticket, reply) => this.write(ticket, reply),
      expiresIn: () => deps.options.orders.ackTimeoutMs,
      expired: (id) => this.settle(id, `not accepted within ${deps.options.orders.ackTimeoutMs} ms`),
    });
  }

  /** A committed host query (its decoding holds the parsed message) received at `receivedAt` (clock.monotonic). */
  answer(decoding: Hl7Decoding, receivedAt: number): void {
    if (!decoding.message || !decoding.header || !decoding.decoded.queries) return;
    this.courier.answer(decoding.decoded.queries, { message: decoding.message, header: decoding.header, charset: decoding.charset }, receivedAt);
  }

  start(): void {
    this.courier.start();
  }

  stop(): void {
    this.courier.stop();
  }

  /**
   * An analyzer's message that acknowledges one labgate sent (its MSA-2 names one awaited): taken, never journaled nor
   * acknowledged (an acknowledgment is not answered). False when it is no such message; it then takes the usual path.
   */
  acknowledged(raw: Buffer): boolean {
    // An acknowledgment is a few short segments: a large message is never one, and is not parsed twice to find out.
    if (this.awaited.size === 0 || raw.length > ACKNOWLEDGMENT_BYTES) return false;
    const parsed = parseMessage(raw.toString('latin1'));
    if (parsed.kind !== 'message') return false;
    const ack = acknowledgmentOf(parsed.message, readHeader(parsed.message), acknowledgmentTypes);
    const awaited = ack === undefined ? undefined : this.awaited.get(ack.controlId);
    if (ack === undefined || awaited === undefined) return false;
    this.awaited.delete(ack.controlId);
    const open = this.open.get(awaited.ticket);
    if (!ack.accepted || !open) this.settle(awaited.ticket, `the analyzer answered ${ack.code || 'without an acknowledgment code'}`);
    else {
      open.left -= 1;
      open.accepted.add(awaited.accession);
      if (open.left === 0) this.settle(awaited.ticket, null);
    }
    return true;
  }

  /** The link the answers went out on is down: every message not yet accepted will not be. */
  dropped(reason: string): void {
    for (const ticket of [...this.open.keys()]) this.settle(ticket, reason);
  }

  // A ticket's end: accepted whole (failure null), or not; what the analyzer did accept of it is recorded as sent.
  private settle(ticket: string, failure: string | null): void {
    const accepted = this.open.get(ticket)?.accepted ?? new Set<string>();
    this.open.delete(ticket);
    for (const [controlId, owner] of this.awaited) if (owner.ticket === ticket) this.awaited.delete(controlId);
    if (failure === null) return this.courier.delivered(ticket);
    if (accepted.size === 0) return this.courier.failed(ticket, failure);
    this.deps.log.warn({ accepted: accepted.size, reason: failure }, 'orders message not accepted; the specimens accepted before it are recorded as sent');
    this.courier.delivered(ticket, accepted);
  }

  // What the analyzer must be sent exactly: the specimen id, its test codes, the patient id when patient data is sent.
  private identifiers(s: InstrumentSpecimen): string[] {
    const patient = this.deps.options.orders.patient && s.patient ? [s.patient.id] : [];
    return [s.accession, ...s.orders.map((o) => o.analyzerCode), ...patient];
  }

  // A download goes to an analyzer that has said nothing: the configured charset, UTF-8 when it is `auto`.
  private charsetOf(reply: Hl7Reply | null): Charset {
    return reply?.charset ?? (this.deps.options.charset === 'latin1' ? 'latin1' : 'utf8');
  }

  /** The ticket's messages: the query's answer (unless a download), then one per specimen the analyzer must accept. */
  private write(ticket: Ticket, reply: Hl7Reply | null): Written {
    const { deps } = this;
    const down = deps.unavailable?.() ?? null;
    if (down !== null) {
      deps.log.warn({ reason: down, purpose: ticket.purpose }, 'orders message not written');
      return { kind: 'refused', reason: down };
    }
    const now = deps.clock.now();
    const app = deps.options.sendingApplication;
    const found = ticket.answer.kind === 'orders';
    const specimens = ticket.answer.kind === 'orders' ? ticket.answer.specimens : [];
    const law = deps.options.orders.dialect === 'law';
    const controlIds = specimens.map(() => `${this.idBase}${++this.sequence}`);
    const messages: SegmentValue[][] = [];
    if (reply !== null) messages.push(law ? queryResponse(reply.message, reply.header, found, now, app) : queryAcknowledgment(reply.header, found, now, app));
    const details = { sampleType: deps.options.orders.specimenType, sampleTime: '', patient: deps.options.orders.patient };
    specimens.forEach((specimen, i) => {
      const controlId = controlIds[i]!;
      if (!law && reply !== null) messages.push(displayResponse(reply.message, reply.header, specimen, details, controlId, now, app));
      else messages.push(workOrder(specimen, this.address(reply, controlId), now));
    });
    const replies = framed(
      messages,
      reply?.message.delimiters ?? defaultDelimiters,
      this.charsetOf(reply),
      deps.options.orders.orderPort ? 'mllp' : deps.options.framing,
    );
    if (replies.refused.length > 0) {
      for (const reason of replies.refused) deps.onEvent({ kind: 'unwritten', reason });
      deps.log.error({ reasons: replies.refused, purpose: ticket.purpose }, 'orders message not written');
      return { kind: 'refused', reason: replies.refused[0]! };
    }
    controlIds.forEach((controlId, i) => this.awaited.set(controlId, { ticket: ticket.id, accession: specimens[i]!.accession }));
    if (controlIds.length > 0) this.open.set(ticket.id, { left: controlIds.length, accepted: new Set() });
    deps.send(replies);
    return controlIds.length === 0 ? { kind: 'complete' } : { kind: 'sent' };
  }

  private address(reply: Hl7Reply | null, controlId: string): Parameters<typeof workOrder>[1] {
    const { orders, sendingApplication } = this.deps.options;
    return {
      sendingApplication,
      receivingApplication: reply?.header.sendingApplication ?? '',
      controlId,
      specimenType: orders.specimenType,
      codingSystem: orders.codingSystem,
      patient: orders.patient,
    };
  }
}
