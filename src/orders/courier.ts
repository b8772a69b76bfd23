// What every two-way instrument does with the order desk's tickets, whatever its protocol: a committed query is
// answered through the desk, download mode polls the pending worklist and sends one download at a time, and what
// the analyzer holds is recorded (desk.delivered) only once its protocol says it has it. The driver writes a ticket
// in its own messages (drivers/astm/two-way.ts, drivers/hl7/two-way.ts) and reports back by the ticket's id. Nothing
// here logs an identifier or patient data: counts and reasons.
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { OrderAnswer } from './answer.js';
import type { OrderDesk, Ticket } from './desk.js';
import type { CommonOrdersOptions } from './options.js';
import type { OrderQuery } from './order.js';

/** What became of writing a ticket: on its way (reported later by id), complete already, or not written. */
export type Written = { kind: 'sent' } | { kind: 'complete' } | { kind: 'refused'; reason: string };

/** What the courier needs from one driver; `Reply` is how the driver answers the analyzer that asked (null: a download). */
export interface CourierDeps<Reply> {
  desk: OrderDesk;
  options: Pick<CommonOrdersOptions, 'query' | 'download' | 'pollIntervalMs'>;
  clock: Clock;
  log: Log;
  /** The answer without the specimens the analyzer cannot be sent exactly, and how many were left out. */
  writable(answer: OrderAnswer, reply: Reply | null): { answer: OrderAnswer; leftOut: number };
  /** Writes the ticket's message(s) in the instrument's protocol and charset. */
  write(ticket: Ticket, reply: Reply | null): Written;
  /** Ms after writing at which the driver is told the ticket expired (Infinity: never). */
  expiresIn(ticket: Ticket): number;
  /** The ticket was not reported within its time: the driver cancels it or reports it failed. */
  expired(id: string): void;
  /** A queued answer the analyzer no longer wants (it cancelled its query). */
  cancel?(id: string, reason: string): void;
}

/** One instrument's queries and downloads, between the desk and the driver. */
export class OrdersCourier<Reply> {
  private readonly tickets = new Map<string, { ticket: Ticket; timer: unknown }>();
  /** Downloads go out one at a time, so an answer never waits behind more than one of them. */
  private readonly downloads: Ticket[] = [];
  private poller: unknown = null;
  private polling: AbortController | null = null;
  private stopped = false;

  constructor(private readonly deps: CourierDeps<Reply>) {}

  /** A query message received at `receivedAt` (clock.monotonic), answered before its deadline through `reply`. */
  answer(queries: readonly OrderQuery[], reply: Reply, receivedAt: number): void {
    if (this.stopped || !this.deps.options.query) return;
    if (queries.every((q) => q.request === 'cancel')) return this.cancelQueued('the analyzer cancelled its query');
    void this.deps.desk
      .ask(queries, receivedAt)
      .then((ticket) => ticket && this.dispatch(ticket, reply))
      .catch((err: unknown) => this.deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'host query not answered (bug)'));
  }

  /** Starts download mode's polling, when configured. */
  start(): void {
    if (this.deps.options.download) this.schedule(1_000);
  }

  /** Stops polling; answers not yet begun are dropped (the analyzer re-queries). */
  stop(): void {
    this.stopped = true;
    if (this.poller !== null) this.deps.clock.clearTimeout(this.poller);
    this.polling?.abort();
    for (const { timer } of this.tickets.values()) if (timer !== null) this.deps.clock.clearTimeout(timer);
  }

  /** Whether the ticket is on its way (written, not yet reported). */
  holds(id: string): boolean {
    return this.tickets.has(id);
  }

  /**
   * The driver's report: the analyzer accepted the ticket's message(s), or of a ticket sent as several messages only
   * those of the specimens in `only` (the rest did not reach it: recorded as sent, they would never be sent again).
   */
  delivered(id: string, only?: ReadonlySet<string>): void {
    const held = this.take(id);
    if (held) this.deps.desk.delivered(only === undefined ? held : partOf(held, only));
    this.nextDownload();
  }

  /** The driver's report: the ticket did not reach the analyzer. */
  failed(id: string, reason: string): void {
    const held = this.take(id);
    if (held) this.deps.desk.failed(held, reason);
    this.nextDownload();
  }

  /** Writes the ticket unless it has nothing the analyzer can be sent exactly. Returns whether it is on its way. */
  private dispatch(ticket: Ticket, reply: Reply | null): boolean {
    if (this.stopped) return false;
    const { deps } = this;
    const { answer, leftOut } = deps.writable(ticket.answer, reply);
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
    // Held before it is written: over an in-memory link the analyzer's acceptance may come back within the write.
    const entry: { ticket: Ticket; timer: unknown } = { ticket: held, timer: null };
    this.tickets.set(held.id, entry);
    const written = deps.write(held, reply);
    if (written.kind !== 'sent') {
      this.take(held.id);
      if (written.kind === 'refused') deps.desk.failed(held, `not written: ${written.reason}`);
      else deps.desk.delivered(held);
      return false;
    }
    const wait = deps.expiresIn(held);
    if (this.tickets.get(held.id) === entry && Number.isFinite(wait)) entry.timer = deps.clock.setTimeout(() => deps.expired(held.id), Math.max(0, wait));
    return true;
  }

  // One download on its way at a time; one that is not sent (nothing writable) makes way for the next at once.
  private nextDownload(): void {
    if ([...this.tickets.values()].some((t) => t.ticket.purpose === 'download')) return;
    for (let next = this.downloads.shift(); next; next = this.downloads.shift()) if (this.dispatch(next, null)) return;
  }

  private take(id: string): Ticket | undefined {
    const held = this.tickets.get(id);
    if (!held) return undefined;
    this.tickets.delete(id);
    if (held.timer !== null) this.deps.clock.clearTimeout(held.timer);
    return held.ticket;
  }

  private cancelQueued(reason: string): void {
    for (const { ticket } of this.tickets.values()) if (ticket.purpose === 'query') this.deps.cancel?.(ticket.id, reason);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.poller = this.deps.clock.setTimeout(() => void this.poll(), ms);
  }

  /** One poll: the pending specimens not yet sent (nor on their way) go out, one message each. */
  private async poll(): Promise<void> {
    const onTheirWay = new Set([...[...this.tickets.values()].map((t) => t.ticket), ...this.downloads].flatMap((t) => t.orders.map((o) => o.orderId)));
    this.polling = new AbortController();
    const timer = this.deps.clock.setTimeout(() => this.polling?.abort(), this.deps.options.pollIntervalMs);
    try {
      const tickets = await this.deps.desk.downloads(this.polling.signal, onTheirWay);
      this.downloads.push(...tickets);
      this.nextDownload();
    } catch (err) {
      this.deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'download poll failed (bug)');
    } finally {
      this.deps.clock.clearTimeout(timer);
      this.schedule(this.deps.options.pollIntervalMs);
    }
  }
}

/** The ticket narrowed to the specimens in `accessions`: their orders, and the answer's specimens among them. */
function partOf(ticket: Ticket, accessions: ReadonlySet<string>): Ticket {
  const answer =
    ticket.answer.kind === 'orders' ? { ...ticket.answer, specimens: ticket.answer.specimens.filter((s) => accessions.has(s.accession)) } : ticket.answer;
  return { ...ticket, answer, orders: ticket.orders.filter((o) => accessions.has(o.accession)) };
}
