// Two-way ASTM for one instrument: a committed query message is answered through the order desk (src/orders/desk.ts)
// and the line's sender; download mode polls the pending worklist. It hands messages to the line and hears back what
// became of each (the analyzer's final ACK, or a failure), so what the analyzer holds is recorded only once it has it.
// Answers are written with the query's own delimiters and echo its sender as their receiver (LIS2-A2 H.2, H.10).
import type { Clock } from '../../src/clock.js';
import type { Log } from '../../src/log.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { OrderQuery } from '../../src/orders/order.js';
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

/** How to write back to the analyzer that asked: its delimiters, and its H.5 sender name as our H.10 receiver. */
export function replyContextOf(text: string): { delimiters: Delimiters; receiver: string } {
  const header = text.split(/\r\n|\r|\n/).find((r) => r.startsWith('H'));
  const read = header ? readDelimiters(header) : null;
  if (!header || read?.kind !== 'delimiters') return { delimiters: standardDelimiters, receiver: '' };
  const record = { type: 'H', fields: header.split(read.delimiters.field), delimiters: read.delimiters };
  return { delimiters: read.delimiters, receiver: component(record, 5, 1) };
}

/** One instrument's queries and downloads. */
export class AstmTwoWay {
  private readonly tickets = new Map<string, { ticket: Ticket; timer: unknown }>();
  /** Downloads go to the line one at a time, so an answer never waits behind more than one of them. */
  private readonly downloads: Ticket[] = [];
  private poller: unknown = null;
  private polling: AbortController | null = null;
  private stopped = false;

  constructor(private readonly deps: TwoWayDeps) {}

  /** A query message received at `receivedAt` (clock.monotonic; its text, for the reply's delimiters): answered before its deadline. */
  answer(queries: readonly OrderQuery[], text: string, receivedAt: number): void {
    if (this.stopped || !this.deps.options.orders.query) return;
    if (queries.every((q) => q.request === 'cancel')) return this.cancelQueued('the analyzer cancelled its query');
    void this.deps.desk
      .ask(queries, receivedAt)
      .then((ticket) => ticket && this.dispatch(ticket, replyContextOf(text)))
      .catch((err: unknown) => this.deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'host query not answered (bug)'));
  }

  /** Starts download mode's polling, when configured. */
  start(): void {
    if (this.deps.options.orders.download) this.schedule(1_000);
  }

  /** Stops polling; answers not yet begun are dropped (the analyzer re-queries). */
  stop(): void {
    this.stopped = true;
    if (this.poller !== null) this.deps.clock.clearTimeout(this.poller);
    this.polling?.abort();
    for (const { timer } of this.tickets.values()) this.deps.clock.clearTimeout(timer);
  }

  /** The line's report: the analyzer ACKed the message's last frame. */
  delivered(id: string): void {
    const held = this.take(id);
    if (held) this.deps.desk.delivered(held);
    this.nextDownload();
  }

  /** The line's report: the message did not reach the analyzer. */
  failed(id: string, reason: string): void {
    const held = this.take(id);
    if (held) this.deps.desk.failed(held, reason);
    this.nextDownload();
  }

  /**
   * Writes the ticket's message in the instrument's charset (encode.ts), unless it has nothing the analyzer can be sent
   * exactly. Returns whether it went to the line. Nothing here logs an identifier or patient data: counts and reasons.
   */
  private dispatch(ticket: Ticket, reply: { delimiters: Delimiters; receiver: string }): boolean {
    if (this.stopped) return false;
    const { deps } = this;
    const ctx: OutgoingContext = { ...reply, at: deps.clock.now(), timezone: deps.profile.timezone, options: deps.options };
    const { answer, leftOut } = writableAnswer(ticket.answer, ctx);
    if (leftOut > 0) {
      deps.desk.countFigure('specimens-left-out');
      deps.log.warn(
        { specimens: leftOut, purpose: ticket.purpose },
        "specimens left out: an identifier the instrument's charset or delimiters cannot carry exactly",
      );
    }
    const kept = new Set(answer.kind === 'orders' ? answer.specimens.map((s) => s.accession) : []);
    const held: Ticket = { ...ticket, answer, orders: ticket.orders.filter((o) => kept.has(o.accession)) };
    if (ticket.purpose === 'download' && answer.kind !== 'orders') return (deps.desk.failed(held, 'nothing the instrument can be sent exactly'), false);
    const records = answer.kind === 'orders' ? ordersMessage(answer.specimens, ticket.purpose, ctx) : noInformationMessage(answer.without, ctx);
    // The instrument's options say "no information" is no answer at all: answered by silence.
    if (records === null) return (deps.desk.delivered(held), false);
    const encoded = encodeRecords(records, ctx.delimiters, deps.options.charset);
    if (encoded.kind === 'refused') {
      deps.onEvent({ kind: 'unwritten', reason: encoded.reason });
      deps.log.error({ reason: encoded.reason, purpose: ticket.purpose }, 'orders message not written');
      return (deps.desk.failed(held, `not written: ${encoded.reason}`), false);
    }
    if (encoded.substituted > 0) {
      deps.onEvent({ kind: 'substituted', characters: encoded.substituted });
      deps.log.warn({ characters: encoded.substituted, purpose: ticket.purpose }, "characters the instrument's charset cannot carry were replaced");
    }
    const wait = Math.max(0, held.startBy - deps.clock.monotonic());
    const timer = Number.isFinite(wait)
      ? deps.clock.setTimeout(() => deps.cancel(held.id, "the analyzer's deadline passed before the line was free"), wait)
      : null;
    this.tickets.set(held.id, { ticket: held, timer });
    deps.send({ id: held.id, text: encoded.text });
    return true;
  }

  // One download on the line at a time; one that is not sent (nothing writable) makes way for the next at once.
  private nextDownload(): void {
    if ([...this.tickets.values()].some((t) => t.ticket.purpose === 'download')) return;
    for (let next = this.downloads.shift(); next; next = this.downloads.shift())
      if (this.dispatch(next, { delimiters: standardDelimiters, receiver: '' })) return;
  }

  private take(id: string): Ticket | undefined {
    const held = this.tickets.get(id);
    if (!held) return undefined;
    this.tickets.delete(id);
    if (held.timer !== null) this.deps.clock.clearTimeout(held.timer);
    return held.ticket;
  }

  private cancelQueued(reason: string): void {
    for (const { ticket } of this.tickets.values()) if (ticket.purpose === 'query') this.deps.cancel(ticket.id, reason);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.poller = this.deps.clock.setTimeout(() => void this.poll(), ms);
  }

  /** One poll: the pending specimens not yet sent (nor on their way) go out, one message each. */
  private async poll(): Promise<void> {
    const onTheirWay = new Set([...[...this.tickets.values()].map((t) => t.ticket), ...this.downloads].flatMap((t) => t.orders.map((o) => o.orderId)));
    this.polling = new AbortController();
    const timer = this.deps.clock.setTimeout(() => this.polling?.abort(), this.deps.options.orders.pollIntervalMs);
    try {
      const tickets = await this.deps.desk.downloads(this.polling.signal, onTheirWay);
      this.downloads.push(...tickets);
      this.nextDownload();
    } catch (err) {
      this.deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'download poll failed (bug)');
    } finally {
      this.deps.clock.clearTimeout(timer);
      this.schedule(this.deps.options.orders.pollIntervalMs);
    }
  }
}
