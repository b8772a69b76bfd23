// What the sinks answered, counted per sink for the progress lines: distinct results delivered, replays the sink
// absorbed (a result delivered again after the crash), and the latest reason a sink gave for not taking a result.
import type { OutboxRow, Outcome } from '../delivery/contract.js';

interface SinkCounts {
  delivered: Set<string>;
  replays: number;
  retries: number;
  lastRetry: string | null;
  refused: string[];
}

/** Per-sink counts, fed by every ObservedSink. */
export class DeliveryTally {
  private readonly sinks = new Map<string, SinkCounts>();

  /** An OutcomeListener. */
  readonly record = (sink: string, rows: readonly OutboxRow[], outcomes: readonly Outcome[]): void => {
    const c = this.counts(sink);
    rows.forEach((row, i) => {
      const o = outcomes[i]!;
      if (o.kind === 'delivered') {
        if (c.delivered.has(row.dedupKey) || o.detail === 'absorbed') c.replays++;
        c.delivered.add(row.dedupKey);
      } else if (o.kind === 'retry') {
        c.retries++;
        c.lastRetry = o.reason;
      } else {
        c.refused.push(`${sink} ${o.kind}: ${o.reason}`);
      }
    });
  };

  /** How many of `keys` this sink has delivered. */
  deliveredOf(sink: string, keys: readonly string[]): number {
    const delivered = this.counts(sink).delivered;
    return keys.filter((k) => delivered.has(k)).length;
  }

  /** Results the sink took again and absorbed (its answer had been lost). */
  replays(sink: string): number {
    return this.counts(sink).replays;
  }

  /** Attempts the sink did not take (outage), and the latest reason. */
  retries(sink: string): { count: number; last: string | null } {
    const c = this.counts(sink);
    return { count: c.retries, last: c.lastRetry };
  }

  /** Dead letters and conflicts: none are expected in the demo. */
  refused(): string[] {
    return [...this.sinks.values()].flatMap((c) => c.refused);
  }

  private counts(sink: string): SinkCounts {
    let c = this.sinks.get(sink);
    if (!c) this.sinks.set(sink, (c = { delivered: new Set(), replays: 0, retries: 0, lastRetry: null, refused: [] }));
    return c;
  }
}
