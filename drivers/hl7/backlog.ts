// Messages complete and waiting, in order of arrival, for the outcome of the one before (each is answered only after
// its own commit). A peer may send MLLP blocks faster than they are committed, so what waits is bounded: at most
// MAX_HELD_BYTES, each message charged MESSAGE_COST beside its bytes (a flood of tiny blocks is bounded too, as the
// ASTM inbox bounds a line read a byte at a time). Over a transport that can stop reading (TCP), reading pauses at the
// cap and resumes at half of it, so the peer waits in the network and nothing is lost; what a chunk already read
// completes is held even past the cap (one chunk at most). Over one that cannot (a serial line), a message past the
// cap is dropped unanswered (the analyzer sends it again), counted and logged once per episode.
// Taking the oldest costs O(1), so a long backlog drains in linear time.
import type { DriverContext } from '../../src/runner-contract.js';

/** The most a backlog holds: bytes plus MESSAGE_COST per message. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;
/** What holding one message costs beside its bytes (its Buffer and its place in the queue). */
export const MESSAGE_COST = 128;

/** A FIFO of complete messages that keeps its held bytes under MAX_HELD_BYTES. */
export class Backlog<T> {
  private items: (T | undefined)[] = [];
  private costs: number[] = [];
  private head = 0;
  /** Bytes held plus MESSAGE_COST per message. */
  private held = 0;
  private paused = false;
  /** Messages dropped since the backlog was last at most half full (a transport that cannot pause). */
  private dropped = 0;

  constructor(
    private readonly ctx: Pick<DriverContext, 'transport' | 'log' | 'onEvent'>,
    private readonly bytesOf: (item: T) => number,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** Holds `item` behind the others; pauses reading at the cap, or drops it where reading cannot be paused. */
  hold(item: T): void {
    const cost = this.bytesOf(item) + MESSAGE_COST;
    const { transport } = this.ctx;
    const pausable = transport.pause !== undefined && transport.resume !== undefined;
    if (!pausable && this.held + cost > MAX_HELD_BYTES) {
      if (this.dropped++ === 0)
        this.ctx.log.warn({ waiting: this.length, maxHeldBytes: MAX_HELD_BYTES }, 'hl7 messages dropped: too many wait for their commit');
      return this.ctx.onEvent({ kind: 'discarded', reason: `HL7 message dropped unanswered: ${MAX_HELD_BYTES} bytes wait for their commit` });
    }
    this.items.push(item);
    this.costs.push(cost);
    this.held += cost;
    if (pausable && !this.paused && this.held >= MAX_HELD_BYTES) {
      this.paused = true;
      transport.pause?.();
      this.ctx.log.info({ waiting: this.length, heldBytes: this.held }, 'hl7 reading paused until the commits catch up');
    }
  }

  /** The oldest message, no longer held; undefined when none waits. */
  take(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.held -= this.costs[this.head]!;
    this.items[this.head] = undefined;
    this.head++;
    // The taken front is let go once it is half the array, so the arrays stay within twice what waits.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.costs = this.costs.slice(this.head);
      this.head = 0;
    }
    if (this.held <= MAX_HELD_BYTES / 2) this.drained();
    return item;
  }

  private drained(): void {
    if (this.paused) {
      this.paused = false;
      this.ctx.transport.resume?.();
    }
    if (this.dropped > 0) this.ctx.log.warn({ dropped: this.dropped }, 'hl7 messages were dropped while too many waited for their commit');
    this.dropped = 0;
  }
}
