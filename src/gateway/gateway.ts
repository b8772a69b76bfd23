// The gateway: its long-lived parts as one ordered list (parts() below), started in that order and stopped in exactly
// the reverse order (lifecycle.ts): the logs' summaries, the store, the clock watch, delivery (sinks and their drains),
// retention, the disk guard, the HTTP listener, then the instruments. So instruments stop taking messages first and the store closes
// after everything that writes to it.
import type { ReloadPlan } from '../config/reload-plan.js';
import type { Config, InstrumentConfig } from '../config/schema.js';
import { twoWayInstruments } from '../config/two-way-checks.js';
import { bindInstruments, loadDrivers, type BoundInstrument } from '../driver-registry.js';
import type { Drain } from '../delivery/drain.js';
import { LabgateError } from '../errors.js';
import { Metrics } from '../metrics.js';
import { GroupCommit } from '../store/group-commit.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Retention } from '../store/retention.js';
import type { BacklogSampler } from './backlog-sampler.js';
import type { Store } from '../store/store.js';
import { SinkHealthView, type SinkHealth } from '../delivery/sink-health.js';
import type { WebServer } from '../web/server.js';
import { ClockPart } from './clock-part.js';
import { DeliveryPart } from './delivery-part.js';
import { DiskPart } from './disk-part.js';
import { createIngestPort } from './ingest-port.js';
import type { IngestPort } from '../runner-contract.js';
import { InstrumentSet } from './instrument-set.js';
import { superviseInstrument, type InstrumentHandle } from './instruments.js';
import { Lifecycle, type Part } from './lifecycle.js';
import { LogsPart } from './logs-part.js';
import { configurationPages, newPortView } from './configuration-pages.js';
import { NewPorts, serialPaths } from './new-ports.js';
import { ConfigReloader, type ReloadStatus } from './reload.js';
import { RetentionPart } from './retention-part.js';
import { StorePart } from './store-part.js';
import { gatewayWeb } from './web.js';

/** One running gateway. */
export class Gateway {
  readonly metrics: Metrics;
  web: WebServer | undefined;
  /** The running instruments; a configuration reload adds, removes or restarts them one at a time. */
  readonly instrumentSet: InstrumentSet;
  /** Detection on the serial ports no instrument names, for the page to add. */
  readonly newPorts: NewPorts;
  private readonly delivery: DeliveryPart;
  private bound: ReadonlyMap<string, BoundInstrument> = new Map();
  private readonly disk: DiskPart;
  private readonly clockPart: ClockPart;
  private readonly storePart: StorePart;
  private readonly retentionPart: RetentionPart;
  private stopping = false;
  private ready = false;
  private readonly lifecycle: Lifecycle;
  private readonly sinkHealthView: SinkHealthView;
  private readonly reloader: ConfigReloader | undefined;
  private running: Config;
  private readonly logs: LogsPart;

  constructor(
    config: Config,
    private readonly deps: GatewayDeps,
  ) {
    this.running = config;
    this.metrics = new Metrics({
      now: () => deps.clock.monotonic(),
      twoWay: (id) => twoWayInstruments(this.config).has(id),
    });
    deps.faults?.onRecord(() => this.metrics.unhandledError());
    this.lifecycle = new Lifecycle(deps.log);
    this.logs = new LogsPart(deps.clock);
    const mappingOf = (id: string) => this.bound.get(id)?.profile.mapping;
    this.storePart = new StorePart({ config: () => this.config, pending: () => this.sinkHealth(), mappingOf }, deps);
    this.retentionPart = new RetentionPart({ gateway: () => this.config.gateway, store: () => this.store! }, deps);
    this.disk = new DiskPart(() => this.config.gateway, deps, this.storePart);
    const probe = deps.clockSync ? { probe: deps.clockSync } : {};
    this.clockPart = new ClockPart({ steady: () => this.store!.steady, clock: deps.clock, log: deps.log.child({ part: 'clock' }), ...probe });
    this.delivery = new DeliveryPart({
      config: () => this.config,
      store: () => this.store!,
      clock: deps.clock,
      random: deps.random,
      log: deps.log,
      metrics: this.metrics,
      ...(deps.sinks ? { sinks: deps.sinks } : {}),
      onOutcomes: () => {
        this.store?.outboxCounts.invalidate();
        this.sampler?.note();
      },
    });
    this.sinkHealthView = new SinkHealthView(
      () => this.delivery.drains,
      () => this.store?.outboxCounts.current() ?? [],
      deps.clock,
      (at, now) => this.store?.steady.ageMs(at, now) ?? now - at,
    );
    this.instrumentSet = new InstrumentSet(
      () => this.config.instruments,
      (instrument) => this.superviseInstrument(instrument),
    );
    this.newPorts = NewPorts.of(() => this.config, deps);
    if (deps.configFile) {
      const apply = (plan: ReloadPlan, next: Config): Promise<void> => this.applyReload(plan, next);
      this.reloader = new ConfigReloader({ file: deps.configFile, current: () => this.config, apply, now: deps.clock.now, log: deps.log });
    }
  }

  /** The store, once its part has started. */
  get store(): Store | undefined {
    return this.storePart.store;
  }

  private get sampler(): BacklogSampler | undefined {
    return this.storePart.sampler;
  }

  private get retention(): Retention | undefined {
    return this.retentionPart.retention;
  }

  /** The configuration running now: the one given at start, or the last reload's. */
  get config(): Config {
    return this.running;
  }

  /** True while new messages may be committed (not shutting down, disk above its floor). */
  accepting(): boolean {
    return !this.stopping && this.disk.accepting();
  }

  isReady(): boolean {
    return this.ready;
  }

  /** The sinks' drains (not two-way's dispatch drain). */
  get drains(): Drain[] {
    return this.delivery.drains;
  }

  /** The running instruments. */
  get instruments(): InstrumentHandle[] {
    return this.instrumentSet.handles();
  }

  /** Starts every part in order (parts()); a part that fails leaves the started ones for stop(). */
  async start(): Promise<{ httpPort: number }> {
    const { config, deps } = this;
    await loadDrivers(config.instruments);
    const bound = bindInstruments(config, deps.decoders);
    if (bound.kind === 'invalid') {
      throw new LabgateError('CONFIG_INVALID', bound.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    }
    this.bound = bound.instruments;
    let httpPort = 0;
    await this.lifecycle.start(this.parts((port) => (httpPort = port)));
    // Unless two-way needed them earlier, the sinks load now, once the ports are open: loading them holds the event loop
    // for a tenth of a second or more, which the analyzers' first messages after a power cut should not wait for.
    await this.instrumentSet.firstOpens(deps.clock, 1_000);
    // Node's process metrics too: their collectors are most of prom-client's modules (prom-metrics.ts).
    if (deps.processMetrics) this.metrics.collectProcessMetrics();
    await this.delivery.running();
    this.ready = true;
    deps.log.info(
      { instruments: this.instruments.length, sinks: this.delivery.sinks.map((s) => s.name), httpPort, parts: this.lifecycle.names() },
      'gateway ready',
    );
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
    await loadDrivers(next.instruments);
    const bound = bindInstruments(next, this.deps.decoders);
    if (bound.kind === 'invalid') throw new LabgateError('CONFIG_INVALID', bound.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
    await this.newPorts.releasePaths(serialPaths(next));
    await this.instrumentSet.apply(plan, () => {
      this.running = next;
      this.bound = bound.instruments;
    });
  }

  /** Each sink's drain status beside its backlog, for health, the status page and metrics. */
  sinkHealth(): SinkHealth[] {
    return this.delivery.withTwoWay(this.sinkHealthView.health(), this.deps.clock.now());
  }

  // The parts in start order; each stop undoes its start.
  private parts(listening: (port: number) => void): Part[] {
    return [
      this.logs,
      this.storePart,
      this.clockPart,
      {
        name: 'delivery',
        start: () => {
          const started = this.delivery.start();
          this.metrics.setBacklogSource(() => this.sinkHealth());
          this.sampler?.note();
          return started;
        },
        stop: () => this.delivery.stop(),
      },
      this.retentionPart,
      this.disk,
      { name: 'http', start: async () => listening((await this.startWeb(this.store!)).port), stop: () => this.web?.stop() },
      this.instrumentSet,
      this.newPorts,
    ];
  }

  private superviseInstrument(instrument: InstrumentConfig): InstrumentHandle {
    const { deps } = this;
    return superviseInstrument(instrument, {
      bound: () => this.bound,
      ingest: this.ingest(),
      accepting: () => this.accepting(),
      rejectedLimits: this.config.gateway.rejectedLimit,
      clock: deps.clock,
      random: deps.random,
      log: deps.log,
      metrics: this.metrics,
      ...(deps.createSerialPort ? { createSerialPort: deps.createSerialPort } : {}),
      ...(deps.onDriverEvent ? { onEvent: deps.onDriverEvent } : {}),
      ...(this.delivery.twoWay ? { orders: this.delivery.twoWay.port } : {}),
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
        this.store?.outboxCounts.invalidate();
        this.delivery.drains.forEach((d) => d.notify());
        this.sampler?.note();
      },
      chargeDisk: (bytes) => this.disk.charge(bytes),
      onJournaled: (bytes, summary) => summary.rejected > 0 && this.retention?.rejectedJournaled(bytes),
      // A full disk fails every message an analyzer resends: one line per interval, not one per attempt.
      log: this.logs.summarized(this.deps.log),
      clockUnsynchronised: () => this.clockPart.unsynchronised(),
      ...(this.deps.beforeCommit ? { beforeCommit: this.deps.beforeCommit } : {}),
    });
    return this.ingestPort;
  }

  private async startWeb(store: Store): Promise<{ port: number }> {
    const { config, deps } = this;
    this.web = gatewayWeb({
      config,
      clock: deps.clock,
      clockStatus: () => this.clockPart.status(),
      log: deps.log,
      summarized: (log) => this.logs.summarized(log),
      store,
      metrics: this.metrics,
      ...(deps.faults ? { faults: deps.faults } : {}),
      ready: () => this.ready,
      disk: () => this.disk.guard,
      instruments: () => this.instruments.map((i) => i.supervisor.snapshot()),
      sinkHealth: () => this.sinkHealth(),
      drains: () => this.delivery.allDrains(),
      bound: () => this.bound,
      retention: () => this.retention,
      reload: () => this.reloadStatus(),
      newPorts: () => this.newPorts.snapshots(),
      ...configurationPages(deps, { running: () => this.config, reload: () => this.reload(), newPorts: () => this.newPorts.snapshots().map(newPortView) }),
    });
    return this.web.start();
  }
}
