// The emulated analyzer's receiving side: the host's ENQ, frames and EOT read by the same pure receiver labgate uses
// (link.ts), with the analyzer's own answers. Messages it receives wait in order for whoever asks for the next one.
// It can play contention: the host's next ENQ is met with the analyzer's own bid instead of an ACK (LIS01-A2 8.2.7).
import type { Clock } from '../../src/clock.js';
import type { Transport } from '../../src/transport/transport.js';
import { ENQ } from './frame.js';
import { drive, initialLinkState, type LinkEffect, type LinkInput, type LinkState } from './link.js';
import { parseAstmOptions } from './options.js';
import { linkConfigOf } from './decode.js';

/** A message the analyzer received, with when the host's ENQ that opened its transfer arrived. */
export interface Received {
  text: Buffer;
  enqAt: number;
  at: number;
}

/** The analyzer's receiver on one transport. */
export class AnalyzerReceiver {
  private state: LinkState = initialLinkState(linkConfigOf(parseAstmOptions({})));
  private timer: unknown = null;
  private enqAt = 0;
  private readonly inbox: Received[] = [];
  private waiter: ((m: Received) => void) | null = null;
  private contend: (() => void) | null = null;
  /** While set, frames after the next ENQ go unanswered (an analyzer gone silent mid-transfer); called at the first. */
  private stalled: { onFrame: (() => void) | null } | null = null;

  constructor(
    private readonly transport: Pick<Transport, 'write'>,
    private readonly clock: Clock,
  ) {}

  /** Feeds bytes that arrived while the analyzer was not sending. */
  readonly feed = (data: Buffer): void => {
    let chunk = data;
    if (this.state.phase === 'neutral' && chunk.includes(ENQ)) {
      this.enqAt = this.clock.now();
      const bid = this.contend;
      if (bid && chunk[0] === ENQ) {
        // Our own ENQ crosses the host's: neither is answered, and the analyzer, having priority, goes first.
        this.contend = null;
        chunk = chunk.subarray(1);
        bid();
      }
    }
    if (this.stalled && this.state.phase === 'receiving') {
      const onFrame = this.stalled.onFrame;
      this.stalled.onFrame = null;
      onFrame?.();
      return;
    }
    if (chunk.length > 0) this.run({ kind: 'bytes', data: chunk });
  };

  /** The next transfer's ENQ is ACKed and nothing after it is: `onFrame` runs when its first frame arrives. */
  stallNext(onFrame: () => void): void {
    this.stalled = { onFrame };
  }

  /** Answers again (the transfer that stalled is discarded by the host's next ENQ). */
  resume(): void {
    this.stalled = null;
  }

  /** The host's next ENQ is met with a bid of our own: `bid` starts the analyzer's send (as contended). */
  contendNext(bid: () => void): void {
    this.contend = bid;
  }

  /** The next message received, or null when none completes within `ms`. */
  next(ms: number): Promise<Received | null> {
    const ready = this.inbox.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve) => {
      const timer = this.clock.setTimeout(() => {
        this.waiter = null;
        resolve(null);
      }, ms);
      this.waiter = (m) => {
        this.clock.clearTimeout(timer);
        this.waiter = null;
        resolve(m);
      };
    });
  }

  /** Messages received that nobody asked for yet. */
  get waiting(): number {
    return this.inbox.length;
  }

  private run(input: LinkInput): void {
    this.state = drive(this.state, input, (e) => this.perform(e));
  }

  private perform(effect: LinkEffect): LinkInput | void {
    switch (effect.kind) {
      case 'write':
        void this.transport.write(effect.data).catch(() => {});
        return;
      case 'arm-timer':
        if (this.timer !== null) this.clock.clearTimeout(this.timer);
        this.timer = this.clock.setTimeout(() => {
          this.timer = null;
          this.run({ kind: 'timeout' });
        }, effect.ms);
        return;
      case 'cancel-timer':
        if (this.timer !== null) this.clock.clearTimeout(this.timer);
        this.timer = null;
        return;
      case 'commit': {
        const m = { text: effect.text, enqAt: this.enqAt, at: this.clock.now() };
        if (this.waiter) this.waiter(m);
        else this.inbox.push(m);
        return { kind: 'committed', ok: true };
      }
      default:
        return;
    }
  }
}
