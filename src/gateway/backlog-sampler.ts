// The backlog chart's samples: a sink's pending count changes only when a message is committed or an outcome is
// recorded, so it is sampled at those moments (and once at start), at most once per slot. A quiet gateway writes
// nothing, and its chart rightly shows the level unchanged.
import type { Logger } from '../logger.js';
import { SLOT_MS } from '../store/sink-figures.js';
import type { Store } from '../store/store.js';

export interface BacklogSamplerOptions {
  store: Pick<Store, 'sinkFigures'>;
  /** Each sink's pending count now (the gateway's cached outbox counts). */
  pending: () => { sink: string; pending: number }[];
  now: () => number;
  /** A clock that never steps, for the spacing of samples; default `now`. */
  monotonic?: () => number;
  log: Pick<Logger, 'warn'>;
}

/** Call `note()` whenever the backlog may have changed. */
export class BacklogSampler {
  private last = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: BacklogSamplerOptions) {}

  note(): void {
    const at = (this.o.monotonic ?? this.o.now)();
    if (at - this.last < SLOT_MS) return;
    this.last = at;
    try {
      this.o.store.sinkFigures.sampleBacklog(this.o.pending(), this.o.now());
    } catch (err) {
      // A full disk fails this as it fails ingest; the chart only misses a point.
      this.o.log.warn({ err }, 'backlog sample not recorded');
    }
  }
}
