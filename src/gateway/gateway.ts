// The gateway: its long-lived parts as one ordered list (parts() below), started in that order and stopped in exactly
// the reverse order (lifecycle.ts): the logs' summaries, the store, delivery (sinks and their drains), retention, the
// disk guard, the HTTP listener, then the instruments. So instruments stop taking messages first and the store closes
// after everything that writes to it. Recovery after a power cut needs no replay step: a capture and its results commit
// in one transaction, so the store never holds a journaled-but-unprocessed message; only in-flight deliveries are
// released.
import type { ReloadPlan } from '../config/reload-plan.js';
import type { Config, InstrumentConfig } from '../config/schema.js';
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
import { GroupCommit } from '../store/group-commit.js';
import { Retention } from '../store/retention.js';
import { openStore, type Store } from '../store/store.js';
import type { SerialPortFactory } from '../transport/endpoint.js';
import { SinkHealthView, type SinkHealth } from '../delivery/sink-health.js';
import type { WebServer } from '../web/server.js';
import { BacklogSampler } from './backlog-sampler.js';
import { recordDeliveryMetrics } from './delivery-metrics.js';
import { createIngestPort } from './ingest-port.js';
import type { IngestPort } from '../runner-contract.js';
import { InstrumentSet } from './instrument-set.js';
import { superviseInstrument, type InstrumentHandle } from './instruments.js';
import { Lifecycle, type Part } from './lifecycle.js';
import { ConfigReloader, type ReloadStatus } from './reload.js';
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
  /** The file the configuration came from: reload() reads it again (labgate run's SIGHUP). */
  configFile?: string;
}

/** One running gateway. */
export class Gateway {
  readonly metrics: Metrics;
  store: Store | undefined;
  web: WebServer | undefined;
  drains: Drain[] = [];
  /** The running instruments; a configuration reload adds, removes or restarts them one at a time. */
  readonly instrumentSet: InstrumentSet;
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
  private readonly lifecycle: Lifecycle;
  private readonly sinkHealthView: SinkHealthView;
  private readonly reloader: ConfigReloader | undefined;
  private running: Config;
  /** Loggers that summarize repeated lines; flushed at stop so their timers do not outlive the gateway. */
  private readonly summaries: LogSummary[] = [];

  constructor(
    config: Config,
    private readonly deps: GatewayDeps,
  ) {
    this.running = config;
    this.metrics = new Metrics({ now: deps.clock.now, processMetrics: deps.processMetrics ?? false });
    deps.faults?.onRecord(() => this.metrics.unhandledError());
    this.lifecycle = new Lifecycle(deps.log);
    this.sinkHealthView = new SinkHealthView(
      () => this.drains,
      () => this.store?.outbox.counts() ?? [],
      deps.clock.now,
    );
    this.instrumentSet = new InstrumentSet(
      () => this.config.instruments,
      (instrument) => this.superviseInstrument(instrument),
    );
    if (deps.configFile) {
      const apply = (plan: ReloadPlan, next: Config): Promise<void> => this.applyReload(plan, next);
      this.reloader = new ConfigReloader({ file: deps.configFile, current: () => this.config, apply, now: deps.clock.now, log: deps.log });
    }
  }

  /** The configuration running now: the one given at start, or the last reload's. */
  get config(): Config {
    return this.running;
  }

  /** True while new messages may be committed (not shutting down, disk above its floor). */
  accepting(): boolean {
    return !this.stopping && (this.disk?.accepting() ?? true);
  }

  isReady(): boolean {
    return this.ready;
  }

  /** The running instruments. */
  get instruments(): InstrumentHandle[] {
    return this.instrumentSet.handles();
  }

  /** Starts every part in order (parts()); a part that fails leaves the started ones for stop(). */
  async start(): Promise<{ httpPort: number }> {
    const { config, deps } = this;
    const bound = bindInstruments(config, deps.decoders);
    if (bound.kind === 'invalid') {
      throw new LabgateError('CONFIG_INVALID', bound.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    }
    this.bound = bound.instruments;
    let httpPort = 0;
    await this.lifecycle.start(this.parts((port) => (httpPort = port)));
    this.ready = true;
    deps.log.info({ instruments: this.instruments.length, sinks: this.sinks.map((s) => s.name), httpPort, parts: this.lifecycle.names() }, 'gateway ready');
    return { httpPort };
  }

  /** Refuses new messages, then stops every started part in reverse order. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    await this.lifecycle.stop();
    this.deps.log.info({}, 'gateway stopped');
  }

  /** Reads the configuration file again and applies what changed (one reload at a time); needs deps.configFile. */
  reload(): Promise<ReloadStatus> {
    if (!this.reloader) return Promise.reject(new LabgateError('USAGE', 'this gateway was not started from a configuration file'));
    return this.reloader.reload();
  }

  /** The last reload's outcome, or null before the first. */
  reloadStatus(): ReloadStatus | null {
    return this.reloader?.status() ?? null;
  }

  /**
   * Applies a validated configuration while everything else runs: the removed and restarted instruments stop first
   * (as on unplug, under the configuration they ran with), then the new configuration is the running one (a remapped
   * instrument's next message reads it), then the restarted and added ones start.
   */
  async applyReload(plan: ReloadPlan, next: Config): Promise<void> {
    const bound = bindInstruments(next, this.deps.decoders);
    if (bound.kind === 'invalid') throw new LabgateError('CONFIG_INVALID', bound.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    await this.instrumentSet.apply(plan, () => {
      this.running = next;
      this.bound = bound.instruments;
    });
  }

  /** Each sink's drain status beside its backlog, for health, the status page and metrics. */
  sinkHealth(): SinkHealth[] {
    const results = this.sinkHealthView.health();
    return this.twoWay ? [...results, this.twoWay.health(this.deps.clock.now())] : results;
  }

  // The parts in start order; each stop undoes its start.
  private parts(listening: (port: number) => void): Part[] {
    const { config, deps } = this;
    return [
      { name: 'logs', start: () => {}, stop: () => this.summaries.forEach((s) => s.flush()) },
      {
        name: 'store',
        start: () => {
          const sinks = deps.sinks ? deps.sinks.map((s) => s.name) : enabledSinkNames(config);
          this.store = openStore({ dataDir: config.gateway.dataDir, sinks, qcSinks: qcSinkNames(config), now: deps.clock.now });
          this.store.outbox.resetInFlight();
          this.sampler = new BacklogSampler({
            store: this.store,
            pending: () => this.sinkHealth(),
            now: deps.clock.now,
            log: deps.log.child({ part: 'backlog' }),
          });
        },
        stop: () => this.store?.close(),
      },
      { name: 'delivery', start: () => this.startDrains(this.store!), stop: () => this.stopDrains() },
      {
        name: 'retention',
        start: () => {
          this.retention = new Retention({ db: this.store!.db, clock: deps.clock, ...config.gateway.retention, log: deps.log.child({ part: 'retention' }) });
          this.retention.start();
        },
        stop: () => this.retention?.stop(),
      },
      { name: 'disk', start: () => this.startDisk(), stop: () => this.disk?.stop() },
      { name: 'http', start: async () => listening((await this.startWeb(this.store!)).port), stop: () => this.web?.stop() },
      this.instrumentSet,
    ];
  }

  private superviseInstrument(instrument: InstrumentConfig): InstrumentHandle {
    const { deps } = this;
    return superviseInstrument(instrument, {
      bound: () => this.bound,
      ingest: this.ingest(),
      accepting: () => this.accepting(),
      clock: deps.clock,
      random: deps.random,
      log: deps.log,
      metrics: this.metrics,
      ...(deps.createSerialPort ? { createSerialPort: deps.createSerialPort } : {}),
      ...(deps.onDriverEvent ? { onEvent: deps.onDriverEvent } : {}),
      ...(this.twoWay ? { orders: this.twoWay.port } : {}),
    });
  }

  // One port for every instrument, made with the first: a full disk's failures are summarized across them.
  private ingestPort: IngestPort | undefined;
  private ingest(): IngestPort {
    if (this.ingestPort) return this.ingestPort;
    const group = new GroupCommit(this.store!);
    this.metrics.setCommitSource(() => group.figures());
    this.ingestPort = createIngestPort({
      store: this.store!,
      group,
      accepting: () => this.accepting(),
      onCommitted: () => {
        this.sinkHealthView.invalidate();
        this.drains.forEach((d) => d.notify());
        this.sampler?.note();
      },
      // A full disk fails every message an analyzer resends: one line per interval, not one per attempt.
      log: this.summarized(this.deps.log),
      ...(this.deps.beforeCommit ? { beforeCommit: this.deps.beforeCommit } : {}),
    });
    return this.ingestPort;
  }

  // The sinks and their drains, then two-way's orders client and dispatch drain (one LIMS token for all of them).
  private startDrains(store: Store): void {
    const { config, deps } = this;
    this.lims = limsTokens(config, deps.clock.now);
    this.sinks = deps.sinks ?? buildSinks(config, { log: deps.log, now: deps.clock.now, ...(this.lims ? { limsTokens: this.lims.tokens } : {}) });
    const drains = createDrains(this.sinks, {
      config,
      outbox: store.outbox,
      clock: deps.clock,
      random: deps.random,
      log: (sink) => sinkLogger(deps.log, sink),
      onOutcomes: (sink) => (rows, outcomes, now) => {
        this.sinkHealthView.invalidate();
        recordDeliveryMetrics(this.metrics, sink, rows, outcomes, now);
        this.sampler?.note();
      },
    });
    this.drains = [...drains.values()];
    this.metrics.setBacklogSource(() => this.sinkHealth());
    for (const drain of this.drains) drain.start();
    this.twoWay = startTwoWay(config, { store, tokens: this.lims?.tokens, clock: deps.clock, random: deps.random, log: deps.log, metrics: this.metrics });
    this.sampler?.note();
  }

  private async stopDrains(): Promise<void> {
    await Promise.allSettled(this.drains.map((d) => d.stop()));
    await this.twoWay?.stop();
    await Promise.allSettled(this.sinks.map((s) => s.close()));
    await this.lims?.agent.close();
  }

  private async startDisk(): Promise<void> {
    const { config, deps } = this;
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
  }

  private async startWeb(store: Store): Promise<{ port: number }> {
    const { config, deps } = this;
    this.web = gatewayWeb({
      config,
      clock: deps.clock,
      log: deps.log,
      summarized: (log) => this.summarized(log),
      store,
      metrics: this.metrics,
      ...(deps.faults ? { faults: deps.faults } : {}),
      ready: () => this.ready,
      disk: () => this.disk,
      instruments: () => this.instruments.map((i) => i.supervisor.snapshot()),
      sinkHealth: () => this.sinkHealth(),
      drains: () => (this.twoWay ? [...this.drains, this.twoWay.drain] : this.drains),
      bound: () => this.bound,
      retention: () => this.retention,
      reload: () => this.reloadStatus(),
    });
    return this.web.start();
  }

  private summarized(log: Logger): LogSummary {
    const summary = new LogSummary(log, this.deps.clock);
    this.summaries.push(summary);
    return summary;
  }
}
