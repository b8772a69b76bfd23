// Two-way ASTM for one instrument: the shared courier (src/orders/courier.ts) answers queries through the order desk
// and polls downloads; this part writes its tickets as LIS2-A2 records for the line's sender and hears back what
// became of each (the analyzer's final ACK, or a failure), so what the analyzer holds is recorded only once it has it.
// Answers are written with the query's own delimiters and echo its sender as their receiver (LIS2-A2 H.2, H.10).
import type { Clock } from '../../src/clock.js';
import type { Log } from '../../src/log.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { OrderQuery } from '../../src/orders/order.js';
import { OrdersCourier, type Written } from '../../src/orders/courier.js';
import type { OrderDesk, Ticket } from '../../src/orders/desk.js';
import type { DriverEvent } from '../../src/runner-contract.js';
import { readDelimiters, standardDelimiters, type Delimiters } from './delimiters.js';
import { encodeRecords } from './encode.js';
import type { AstmOptions } from './options.js';
import { noInformationMessage, ordersMessage, writableAnswer, type OutgoingContext } from './order-records.js';
import { component } from './records.js';
import type { Outgoing } from './sender.js';

/** What two-way needs from the runner: the line's sender. */
export interface TwoWayDeps {
  desk: OrderDesk;
  profile: InstrumentProfile;
  options: AstmOptions;
  clock: Clock;
  log: Log;
  onEvent(event: DriverEvent): void;
  send(message: Outgoing): void;
  cancel(id: string, reason: string): void;
}

/** How an answer is written back to the analyzer that asked. */
export interface AstmReply {
  delimiters: Delimiters;
  receiver: string;
}

/** How to write back to the analyzer that asked: its delimiters, and its H.5 sender name as our H.10 receiver. */
export function replyContextOf(text: string): AstmReply {
  const header = text.split(/\r\n|\r|\n/).find((r) => r.startsWith('H'));
  const read = header ? readDelimiters(header) : null;
  if (!header || read?.kind !== 'delimiters') return { delimiters: standardDelimiters, receiver: '' };
  const record = { type: 'H', fields: header.split(read.delimiters.field), delimiters: read.delimiters };
  return { delimiters: read.delimiters, receiver: component(record, 5, 1) };
}

/** One instrument's queries and downloads: the shared courier (src/orders/courier.ts) writing LIS2-A2 records. */
export class AstmTwoWay {
  private readonly courier: OrdersCourier<AstmReply>;

  constructor(private readonly deps: TwoWayDeps) {
    this.courier = new OrdersCourier<AstmReply>({
      desk: deps.desk,
      options: deps.options.orders,
      clock: deps.clock,
      log: deps.log,
      writable: (answer, reply) => writableAnswer(answer, this.context(reply)),
      write: (ticket, reply) => this.write(ticket, this.context(reply)),
      // The line may be busy with the analyzer's own messages: an answer not begun by the deadline is not sent.
      expiresIn: (ticket) => ticket.startBy - deps.clock.monotonic(),
      expired: (id) => deps.cancel(id, "the analyzer's deadline passed before the line was free"),
      cancel: (id, reason) => deps.cancel(id, reason),
    });
  }

  /** A query message received at `receivedAt` (clock.monotonic; its text, for the reply's delimiters): answered before its deadline. */
  answer(queries: readonly OrderQuery[], text: string, receivedAt: number): void {
    this.courier.answer(queries, replyContextOf(text), receivedAt);
  }

  /** Starts download mode's polling, when configured. */
  start(): void {
    this.courier.start();
  }

  /** Stops polling; answers not yet begun are dropped (the analyzer re-queries). */
  stop(): void {
    this.courier.stop();
  }

  /** The line's report: the analyzer ACKed the message's last frame. */
  delivered(id: string): void {
    this.courier.delivered(id);
  }

  /** The line's report: the message did not reach the analyzer. */
  failed(id: string, reason: string): void {
    this.courier.failed(id, reason);
  }

  // A download is written with the standard's delimiters and no receiver name.
  private context(reply: AstmReply | null): OutgoingContext {
    const { deps } = this;
    return { ...(reply ?? { delimiters: standardDelimiters, receiver: '' }), at: deps.clock.now(), timezone: deps.profile.timezone, options: deps.options };
  }

  /** The ticket's records in the instrument's charset (encode.ts), handed to the line. */
  private write(ticket: Ticket, ctx: OutgoingContext): Written {
    const { deps } = this;
    const { answer } = ticket;
    const records = answer.kind === 'orders' ? ordersMessage(answer.specimens, ticket.purpose, ctx) : noInformationMessage(answer.without, ctx);
    // The instrument's options say "no information" is no answer at all: answered by silence.
    if (records === null) return { kind: 'complete' };
    const encoded = encodeRecords(records, ctx.delimiters, deps.options.charset);
    if (encoded.kind === 'refused') {
      deps.onEvent({ kind: 'unwritten', reason: encoded.reason });
      deps.log.error({ reason: encoded.reason, purpose: ticket.purpose }, 'orders message not written');
      return encoded;
    }
    if (encoded.substituted > 0) {
      deps.onEvent({ kind: 'substituted', characters: encoded.substituted });
      deps.log.warn({ characters: encoded.substituted, purpose: ticket.purpose }, "characters the instrument's charset cannot carry were replaced");
    }
    deps.send({ id: ticket.id, text: encoded.text });
    return { kind: 'sent' };
  }
}
