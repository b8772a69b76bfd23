// The figures /metrics reads from the running gateway when it is scraped, never pushed: the sinks' backlog and
// circuits, the group commit's counts, each instrument's last message, the disk guard's view and the WAL's size. Each
// scrape takes one reading of each source (Metrics.render), so the gauges of one scrape agree with one another.
import { Counter, Gauge, type Registry } from './prom-metrics.js';
import type { GroupFigures } from './store/group-commit.js';

/** One sink's backlog and circuit as the store and its drain report them. */
export interface SinkBacklog {
  sink: string;
  pending: number;
  /** Age in seconds of the oldest pending row; 0 when none. */
  oldestAgeSeconds: number;
  dead: number;
  conflicts?: number;
  circuit?: CircuitName;
}

type CircuitName = 'closed' | 'open' | 'half-open';
const circuits: CircuitName[] = ['closed', 'open', 'half-open'];

/** What the gateway itself reports at scrape time. */
export interface GatewayFigures {
  /** Each running instrument's newest message the store kept (epoch ms); an instrument that sent none is absent. */
  lastMessages: { instrument: string; at: number }[];
  /** The disk guard's latest measurement of the data directory's filesystem; absent before the first. */
  disk?: { freeBytes: number | undefined; floorBytes: number; accepting: boolean };
  /** Bytes of the store's write-ahead log now (0 right after a checkpoint truncated it). */
  walBytes?: number;
  /** True when the wall clock is known synchronised (systemd-timesyncd or timedated said so). */
  clockSynchronised?: boolean;
}

/** Where the gauges read, once per scrape. */
export interface ScrapeReadings {
  backlog: () => SinkBacklog[];
  commits: () => GroupFigures;
  gateway: () => GatewayFigures;
  /** Sinks with a drain rate, and each one's rate in rows per second. */
  rates: () => { sink: string; perSecond: number }[];
}

/** Registers every scrape-time figure on `registry`. */
export function registerScrapeGauges(registry: Registry, read: ScrapeReadings): void {
  sinkGauges(registry, read);
  commitCounters(registry, read.commits);
  gatewayGauges(registry, read.gateway);
}

type Fill<L extends string> = (set: (labels: Partial<Record<L, string>>, value: number) => void) => void;

/** A gauge whose values are set from `fill` at each scrape (and only then); one `fill` leaves unset is absent, not 0. */
function scraped<L extends string>(registry: Registry, name: string, help: string, labelNames: L[], fill: Fill<L>): void {
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      // prom-client gives a gauge without labels the value 0 on reset: an unknown figure must not read as zero.
      if (labelNames.length === 0) this.remove({});
      fill((labels, value) => this.set(labels, value));
    },
  });
}

function sinkGauges(r: Registry, read: ScrapeReadings): void {
  const fromBacklog = (name: string, help: string, pick: (b: SinkBacklog) => number): void =>
    scraped(r, name, help, ['sink'], (set) => read.backlog().forEach((b) => set({ sink: b.sink }, pick(b))));
  fromBacklog('labgate_sink_pending', 'Outbox rows waiting for the sink', (b) => b.pending);
  fromBacklog('labgate_sink_oldest_pending_age_seconds', 'Age of the oldest pending row', (b) => b.oldestAgeSeconds);
  fromBacklog('labgate_sink_dead', 'Dead letters waiting for an operator', (b) => b.dead);
  fromBacklog('labgate_sink_conflicts', 'Conflicts kept aside for a person', (b) => b.conflicts ?? 0);
  scraped(r, 'labgate_sink_drain_rate', 'Rows delivered per second, averaged over the drain window', ['sink'], (set) =>
    read.rates().forEach(({ sink, perSecond }) => set({ sink }, perSecond)),
  );
  scraped(r, 'labgate_sink_circuit_state', "1 for the circuit state the sink's drain is in (open or half-open: paused, probing)", ['sink', 'state'], (set) => {
    for (const b of read.backlog()) if (b.circuit) for (const state of circuits) set({ sink: b.sink, state }, state === b.circuit ? 1 : 0);
  });
}

// Read from the committer when scraped: messages over commits is the group size, commits over fsyncs the groups
// one fsync made durable (a slow disk makes the fsyncs fewer, not the analyzers slower).
function commitCounters(r: Registry, figures: () => GroupFigures): void {
  const counter = (name: string, help: string, pick: (f: GroupFigures) => number): Counter =>
    new Counter({
      name,
      help,
      registers: [r],
      collect() {
        this.reset();
        this.inc(pick(figures()));
      },
    });
  counter('labgate_store_commits_total', 'Transactions that committed analyzer messages (one per group)', (f) => f.commits);
  counter(
    'labgate_store_committed_messages_total',
    'Analyzer messages the group commit took into its transactions (each in its own savepoint)',
    (f) => f.messages,
  );
  counter('labgate_store_wal_fsyncs_total', 'WAL fsyncs that made committed groups durable before their ACKs', (f) => f.fsyncs);
}

// The last message is read from the store, so it survives a restart: a silent analyzer stays measurably silent.
function gatewayGauges(r: Registry, read: () => GatewayFigures): void {
  scraped(r, 'labgate_instrument_last_message_timestamp_seconds', 'When the newest message of the instrument was received (Unix time)', ['instrument'], (set) =>
    read().lastMessages.forEach(({ instrument, at }) => set({ instrument }, at / 1000)),
  );
  const disk = (name: string, help: string, pick: (d: NonNullable<GatewayFigures['disk']>) => number | undefined): void =>
    scraped(r, name, help, [], (set) => {
      const d = read().disk;
      const value = d ? pick(d) : undefined;
      if (value !== undefined) set({}, value);
    });
  disk('labgate_disk_free_bytes', "Free space on the data directory's filesystem, as the disk guard last measured it", (d) => d.freeBytes);
  disk('labgate_disk_floor_bytes', 'Free space below which new messages are refused (gateway.diskFloorMb)', (d) => d.floorBytes);
  disk('labgate_disk_accepting', '1 while the disk guard accepts new messages, 0 while it refuses them', (d) => (d.accepting ? 1 : 0));
  scraped(r, 'labgate_store_wal_bytes', "Size of the store's write-ahead log", [], (set) => {
    const bytes = read().walBytes;
    if (bytes !== undefined) set({}, bytes);
  });
  scraped(
    r,
    'labgate_clock_synchronised',
    '1 while the wall clock is known synchronised (systemd-timesyncd or timedated), 0 while it is not or cannot be told',
    [],
    (set) => {
      const synchronised = read().clockSynchronised;
      if (synchronised !== undefined) set({}, synchronised ? 1 : 0);
    },
  );
}
