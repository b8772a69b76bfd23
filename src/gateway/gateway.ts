// The gateway: store, drains, HTTP, disk guard and instruments, started in that order and stopped in reverse.
// Recovery after a power cut needs no replay step: a capture and its results commit in one transaction, so the
// store never holds a journaled-but-unprocessed message; only in-flight deliveries are released.
import type { Config } from '../config/schema.js';
import type { Clock } from '../clock.js';
import type { DriverEvent } from '../runner-contract.js';
import { bindInstruments, type BoundInstrument, type MessageDecoders } from '../driver-registry.js';
import { DiskGuard, type StatFs } from '../disk-guard.js';
import type { Drain } from '../delivery/drain.js';
import { createDrains } from '../delivery/drains.js';
import { LabgateError } from '../errors.js';
import { sinkLogger, type Logger } from '../logger.js';
import { LogSummary } from '../log-summary.js';
import { Metrics } from '../metrics.js';
import type { ProcessFaults } from '../process-faults.js';
import type { Sink } from '../delivery/contract.js';
import { Retention } from '../store/retention.js';
import { openStore, type Store } from '../store/store.js';
import type { SerialPortFactory } from '../transport/endpoint.js';
import type { SinkHealth } from '../web/health.js';
import type { WebServer } from '../web/server.js';
import { BacklogSampler } from './backlog-sampler.js';
import { recordDeliveryMetrics } from './delivery-metrics.js';
import { createIngestPort } from './ingest-port.js';
import { superviseInstruments, type InstrumentHandle } from './instruments.js';
import { buildSinks, enabledSinkNames, qcSinkNames } from './sinks.js';
import { limsTokens, startTwoWay, type TwoWay } from './two-way.js';
import { gatewayWeb } from './web.js';

/** What the composition root injects (tests and the demo replace the serial ports, sinks and disk probe). */
export interface GatewayDeps {
  clock: Clock;
  random: () => number;
  log: Logger;
  createSerialPort?: SerialPortFactory;
  /** Sinks to use instead of building them from the configuration (the demo's embedded PostgreSQL). */
  sinks?: Sink[];
  statfs?: StatFs;
  /** How often the disk guard measures free space (default 5 s); the full-disk test shortens it. */
  diskIntervalMs?: number;
  /** Decoders the instruments' runners use instead of their protocol's own (a test's failing decoder). */
  decoders?: MessageDecoders;
  /** Test-only fault hook run just before each commit (see createIngestPort). */
  beforeCommit?: () => void;
  onDriverEvent?: (instrument: string, event: DriverEvent) => void;
  processMetrics?: boolean;
  /** Unhandled rejections of this process (labgate run installs it), shown on /healthz and /metrics. */
  faults?: ProcessFaults;
}

/** One running gateway. */
export class Gateway {
  readonly metrics: Metrics;
  store: Store | undefined;
  web: WebServer | undefined;
  drains: Drain[] = [];
  instruments: InstrumentHandle[] = [];
  private sinks: Sink[] = [];
  /** Query and download modes' orders client and dispatch drain, when an instrument is two-way. */
  private twoWay: TwoWay | undefined;
  private lims: ReturnType<typeof limsTokens>;
  private bound: ReadonlyMap<string, BoundInstrument> = new Map();
  private disk: DiskGuard | undefined;
  private retention: Retention | undefined;
  private stopping = false;
  private ready = false;
  private sampler: BacklogSampler | undefined;
  /** Loggers that summarize repeated lines; flushed at stop so their timers do not outlive the gateway. */
  private readonly summaries: LogSummary[] = [];

  constructor(
    readonly config: Config,
    private readonly deps: GatewayDeps,
  ) {
    this.metrics = new Metrics({ now: deps.clock.now, processMetrics: deps.processMetrics ?? false });
    deps.faults?.onRecord(() => this.metrics.unhandledError());
  }

  /** True while new messages may be committed (not shutting down, disk above its floor). */
  accepting(): boolean {
    return !this.stopping && (this.disk?.accepting() ?? true);
  }

  isReady(): boolean {
    return this.ready;
  }

  /** Opens the store (taking the data-directory lock), then drains, HTTP, disk guard and instruments. */
  async start(): Promise<{ httpPort: number }> {
    const { config, deps } = this;
    const bound = bindInstruments(config, deps.decoders);
    if (bound.kind === 'invalid') {
      throw new LabgateError('CONFIG_INVALID', bound.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    }
    this.bound = bound.instruments;
    const sinkNames = deps.sinks ? deps.sinks.map((s) => s.name) : enabledSinkNames(config);
    const store = openStore({ dataDir: config.gateway.dataDir, sinks: sinkNames, qcSinks: qcSinkNames(config), now: deps.clock.now });
    this.store = store;
    store.outbox.resetInFlight();
    this.sampler = new BacklogSampler({ store, pending: () => this.sinkHealth(), now: deps.clock.now, log: deps.log.child({ part: 'backlog' }) });
    this.lims = limsTokens(config, deps.clock.now);
    this.startDrains(store);
    this.twoWay = startTwoWay(config, { store, tokens: this.lims?.tokens, clock: deps.clock, random: deps.random, log: deps.log, metrics: this.metrics });
    this.sampler.note();
    this.retention = new Retention({ db: store.db, clock: deps.clock, ...config.gateway.retention, log: deps.log.child({ part: 'retention' }) });
    this.retention.start();
    this.disk = new DiskGuard({
      path: config.gateway.dataDir,
      floorBytes: config.gateway.diskFloorMb * 1024 * 1024,
      clock: deps.clock,
      log: deps.log.child({ part: 'disk' }),
      ...(deps.statfs ? { statfs: deps.statfs } : {}),
      ...(deps.diskIntervalMs ? { intervalMs: deps.diskIntervalMs } : {}),
    });
    await this.disk.check();
    this.disk.start();
    const address = await this.startWeb(store);
    const ingest = createIngestPort({
      store,
      accepting: () => this.accepting(),
      onCommitted: () => {
        this.countsCache = undefined;
        this.drains.forEach((d) => d.notify());
        this.sampler?.note();
      },
      // A full disk fails every message an analyzer resends: one line per interval, not one per attempt.
      log: this.summarized(deps.log),
      ...(deps.beforeCommit ? { beforeCommit: deps.beforeCommit } : {}),
    });
    this.instruments = superviseInstruments(config, {
      bound: bound.instruments,
      ingest,
      accepting: () => this.accepting(),
      clock: deps.clock,
      random: deps.random,
      log: deps.log,
      metrics: this.metrics,
      ...(deps.createSerialPort ? { createSerialPort: deps.createSerialPort } : {}),
      ...(deps.onDriverEvent ? { onEvent: deps.onDriverEvent } : {}),
      ...(this.twoWay ? { orders: this.twoWay.port } : {}),
    });
    for (const instrument of this.instruments) instrument.supervisor.start();
    this.ready = true;
    deps.log.info({ instruments: this.instruments.length, sinks: sinkNames, httpPort: address.port }, 'gateway ready');
    return { httpPort: address.port };
  }

  /** Refuses new messages, lets an in-flight commit finish, closes ports, ends drains, closes the store. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    await Promise.allSettled(this.instruments.map((i) => i.supervisor.stop()));
    await Promise.allSettled(this.instruments.map((i) => i.endpoint.close()));
    await Promise.allSettled(this.drains.map((d) => d.stop()));
    await this.twoWay?.stop();
    await Promise.allSettled(this.sinks.map((s) => s.close()));
    await this.lims?.agent.close();
    this.disk?.stop();
    await this.web?.stop();
    await this.retention?.stop();
    this.store?.close();
    for (const summary of [...this.summaries, ...this.instruments.map((i) => i.log)]) summary.flush();
    this.deps.log.info({}, 'gateway stopped');
  }

  /** Each sink's drain status beside its backlog, for health, the status page and metrics. */
  sinkHealth(): SinkHealth[] {
    const now = this.deps.clock.now();
    const counts = this.outboxCounts(now);
    const results = this.drains.map((drain): SinkHealth => {
      const status = drain.status();
      const c = counts.find((x) => x.sink === status.sink);
      const oldest = c?.oldestPendingAt ?? null;
      return {
        sink: status.sink,
        pending: c?.pending ?? 0,
        oldestAgeSeconds: oldest === null ? 0 : Math.max(0, Math.round((now - oldest) / 1000)),
        dead: c?.dead ?? 0,
        conflicts: c?.conflict ?? 0,
        circuit: status.circuit,
        ...(status.lastError && status.circuit !== 'closed' ? { reason: status.lastError } : {}),
      };
    });
    return this.twoWay ? [...results, this.twoWay.health(now)] : results;
  }

  // Counting a large pending backlog walks its index; while nothing changes (no commit, no outcome), /healthz and
  // /metrics share one count for a couple of seconds instead of each blocking the event loop for it.
  private countsCache: { at: number; counts: ReturnType<Store['outbox']['counts']> } | undefined;
  private outboxCounts(now: number): ReturnType<Store['outbox']['counts']> {
    if (!this.store) return [];
    if (!this.countsCache || now - this.countsCache.at > 2_000) this.countsCache = { at: now, counts: this.store.outbox.counts() };
    return this.countsCache.counts;
  }

  private startDrains(store: Store): void {
    const { config, deps } = this;
    this.sinks = deps.sinks ?? buildSinks(config, { log: deps.log, now: deps.clock.now, ...(this.lims ? { limsTokens: this.lims.tokens } : {}) });
    const drains = createDrains(this.sinks, {
      config,
      outbox: store.outbox,
      clock: deps.clock,
      random: deps.random,
      log: (sink) => sinkLogger(deps.log, sink),
      onOutcomes: (sink) => (rows, outcomes, now) => {
        this.countsCache = undefined;
        recordDeliveryMetrics(this.metrics, sink, rows, outcomes, now);
        this.sampler?.note();
      },
    });
    this.drains = [...drains.values()];
    this.metrics.setBacklogSource(() => this.sinkHealth());
    for (const drain of this.drains) drain.start();
  }

  private async startWeb(store: Store): Promise<{ port: number }> {
    const { config, deps } = this;
    this.web = gatewayWeb({
      config, clock: deps.clock, log: deps.log, summarized: (log) => this.summarized(log), store, metrics: this.metrics,
      ...(deps.faults ? { faults: deps.faults } : {}),
      ready: () => this.ready,
      disk: () => this.disk,
      instruments: () => this.instruments.map((i) => i.supervisor.snapshot()),
      sinkHealth: () => this.sinkHealth(),
      drains: () => (this.twoWay ? [...this.drains, this.twoWay.drain] : this.drains),
      bound: () => this.bound,
      retention: () => this.retention,
    });
    return this.web.start();
  }

  private summarized(log: Logger): LogSummary {
    const summary = new LogSummary(log, this.deps.clock);
    this.summaries.push(summary);
    return summary;
  }
}
