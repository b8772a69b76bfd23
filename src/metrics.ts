// The gateway's Prometheus metrics, on a registry of its own (never prom-client's global one, so tests and
// two gateways in one process do not share counters). The runtime pushes events in; backlog and the other
// figures of scrape-gauges.ts are pulled from injected sources at scrape time, so the store is read only when
// someone asks.
import { DeliveryRate } from './delivery/rate.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from './prom-metrics.js';
import { noInformationReasons } from './orders/order.js';
import type { DriverEvent } from './runner-contract.js';
import { registerScrapeGauges, type GatewayFigures, type SinkBacklog } from './scrape-gauges.js';
import type { GroupFigures } from './store/group-commit.js';
import type { PortState, PortStatus } from './transport/supervisor.js';

export type { GatewayFigures, SinkBacklog } from './scrape-gauges.js';

/** What a delivered batch reports: one latency (capture received → sink confirmed) per delivered row. */
export type DeliveryOutcomeKind = 'delivered' | 'retry' | 'conflict' | 'dead';

export interface MetricsOptions {
  /** Clock for the drain-rate window: a monotonic one, so a step of the wall clock does not empty or stretch it. */
  now: () => number;
  /** Seconds over which `labgate_sink_drain_rate` is averaged. */
  drainWindowSeconds?: number;
  /** Whether an instrument answers host queries or takes downloads: its two-way figures then start at 0 too. */
  twoWay?: (instrument: string) => boolean;
}

const states: PortState[] = ['connected', 'waiting-for-device', 'error', 'stopped'];

/** The metrics registry the runtime feeds. */
export class Metrics {
  readonly registry = new Registry();
  private processMetricsAdded = false;
  private readonly messages: Counter<'instrument'>;
  private readonly results: Counter<'instrument' | 'outcome'>;
  private readonly naks: Counter<'instrument'>;
  private readonly checksumErrors: Counter<'instrument'>;
  private readonly discarded: Counter<'instrument'>;
  private readonly lost: Counter<'instrument'>;
  private readonly substituted: Counter<'instrument'>;
  private readonly unwritten: Counter<'instrument'>;
  private readonly commitFailures: Counter<'instrument'>;
  private readonly overLimit: Counter<'instrument'>;
  private readonly bytes: Counter<'instrument'>;
  private readonly reconnects: Counter<'instrument'>;
  private readonly portState: Gauge<'instrument' | 'state'>;
  private readonly outcomes: Counter<'sink' | 'outcome'>;
  private readonly latency: Histogram<'sink'>;
  private readonly unhandled: Counter;
  private readonly refused: Counter<'instrument' | 'reason'>;
  private readonly queries: Counter<'instrument'>;
  private readonly answers: Counter<'instrument' | 'answer' | 'reason'>;
  private readonly overCap: Counter<'upstream'>;
  private readonly downloads: Counter<'instrument'>;
  private readonly answerTime: Histogram<'instrument'>;
  /** Per sink, the rows delivered in each second of the drain-rate window (old seconds dropped as rows arrive). */
  private readonly delivered = new Map<string, DeliveryRate>();
  private backlogSource: () => SinkBacklog[] = () => [];
  private commitSource: () => GroupFigures = () => ({ commits: 0, fsyncs: 0, messages: 0 });
  private backlog: SinkBacklog[] = [];
  private gatewaySource: () => GatewayFigures = () => ({ lastMessages: [] });
  private gateway: GatewayFigures = { lastMessages: [] };
  /** Reconnects already counted per instrument (supervisor statuses carry a running total). */
  private readonly reconnectsSeen = new Map<string, number>();
  /** Instruments and sinks whose counters were started at 0. */
  private readonly seen = new Set<string>();
  private readonly windowMs: number;

  constructor(private readonly options: MetricsOptions) {
    const r = [this.registry];
    const perInstrument = (name: string, help: string): Counter<'instrument'> => new Counter({ name, help, labelNames: ['instrument'], registers: r });
    this.windowMs = (options.drainWindowSeconds ?? 60) * 1000;
    this.messages = perInstrument('labgate_messages_total', 'Analyzer messages committed');
    this.results = new Counter({
      name: 'labgate_results_total',
      help: 'Results by ingest outcome (inserted, absorbed replay, conflict, rejected)',
      labelNames: ['instrument', 'outcome'],
      registers: r,
    });
    this.naks = perInstrument('labgate_naks_total', 'NAK (ASTM) or AR (HL7) sent to the analyzer');
    this.checksumErrors = perInstrument('labgate_checksum_errors_total', 'Frames with a bad checksum');
    this.discarded = perInstrument('labgate_discarded_messages_total', 'Incomplete messages discarded (unplug, timeout)');
    this.lost = perInstrument(
      'labgate_lost_messages_total',
      'Messages the analyzer will not resend that could not be kept (a printer report the store could not take in time)',
    );
    this.substituted = perInstrument(
      'labgate_substituted_characters_total',
      "Characters written to an analyzer replaced because its charset cannot carry them (drivers' READMEs say by what)",
    );
    this.unwritten = perInstrument(
      'labgate_unwritten_messages_total',
      'Messages to an analyzer (answers, downloads, acknowledgments) not written: their bytes would not read back as meant',
    );
    this.commitFailures = perInstrument('labgate_commit_failures_total', 'Messages the store could not commit');
    this.overLimit = perInstrument('labgate_over_limit_messages_total', 'Rejected messages refused: only rejected ones sent, over gateway.rejectedLimit');
    this.bytes = perInstrument('labgate_received_bytes_total', 'Bytes received from the analyzer');
    this.reconnects = perInstrument('labgate_port_reconnects_total', 'Times a port came back after being connected');
    this.portState = new Gauge({
      name: 'labgate_port_state',
      help: '1 for the port state the instrument is in',
      labelNames: ['instrument', 'state'],
      registers: r,
    });
    this.outcomes = new Counter({ name: 'labgate_sink_outcomes_total', help: 'Delivery outcomes per sink', labelNames: ['sink', 'outcome'], registers: r });
    this.latency = new Histogram({
      name: 'labgate_delivery_latency_seconds',
      help: 'From capture received to sink confirmed',
      labelNames: ['sink'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400],
      registers: r,
    });
    this.unhandled = new Counter({ name: 'labgate_unhandled_errors_total', help: 'Promise rejections nothing handled (each a bug; logged)', registers: r });
    this.refused = new Counter({
      name: 'labgate_refused_connections_total',
      help: 'Connections an instrument port refused (not-allowed: source address not on the allow-list; busy: a session is talking)',
      labelNames: ['instrument', 'reason'],
      registers: r,
    });
    this.queries = perInstrument('labgate_host_queries_total', 'Host queries (ASTM Q) received from two-way analyzers');
    this.answers = new Counter({
      name: 'labgate_query_answers_total',
      help: 'Answers to host queries: orders, no-information (with its reason), or failed (never reached the analyzer)',
      labelNames: ['instrument', 'answer', 'reason'],
      registers: r,
    });
    this.overCap = new Counter({
      name: 'labgate_upstream_answers_over_cap_total',
      help: 'Upstream answers not read past their size cap (sinks.*.maxAnswerBytes): lims, lims-token, lims-orders, lims-dispatch, fhir',
      labelNames: ['upstream'],
      registers: r,
    });
    this.downloads = perInstrument('labgate_order_downloads_total', 'Download-mode messages the analyzer ACKed');
    this.answerTime = new Histogram({
      name: 'labgate_query_answer_seconds',
      help: "From a host query's arrival to the analyzer's acceptance of the answer",
      labelNames: ['instrument'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60],
      registers: r,
    });
    const sinks = (): Set<string> => new Set([...this.delivered.keys(), ...this.backlog.map((b) => b.sink)]);
    registerScrapeGauges(this.registry, {
      backlog: () => this.backlog,
      commits: () => this.commitSource(),
      gateway: () => this.gateway,
      rates: () => [...sinks()].map((sink) => ({ sink, perSecond: this.drainRate(sink) })),
    });
  }

  /** Adds Node's process metrics (RSS, CPU, event-loop lag, GC), once; the gateway does so once its instruments are open. */
  collectProcessMetrics(): void {
    if (this.processMetricsAdded) return;
    this.processMetricsAdded = true;
    // The event-loop lag histogram samples every 100 ms, not prom-client's default 10 ms: that timer alone woke an
    // idle gateway 100 times a second. A stall of 100 ms or more is always seen; shorter ones are not worth the wakeups.
    collectDefaultMetrics({ register: this.registry, prefix: 'labgate_', eventLoopMonitoringPrecision: 100 });
  }

  /** Counts one driver event for an instrument (wire to DriverContext.onEvent). */
  driverEvent(instrument: string, event: DriverEvent): void {
    switch (event.kind) {
      case 'bytes':
        return this.bytes.inc({ instrument }, event.count);
      case 'message': {
        this.messages.inc({ instrument });
        const s = event.summary;
        for (const outcome of ['inserted', 'absorbed', 'conflicts', 'rejected'] as const) {
          if (s[outcome] > 0) this.results.inc({ instrument, outcome: outcome === 'conflicts' ? 'conflict' : outcome }, s[outcome]);
        }
        return;
      }
      case 'nak':
        return this.naks.inc({ instrument });
      case 'checksum-error':
        return this.checksumErrors.inc({ instrument });
      case 'discarded':
        return this.discarded.inc({ instrument });
      case 'commit-failed':
        return this.commitFailures.inc({ instrument });
      case 'over-limit':
        return this.overLimit.inc({ instrument });
      case 'orders':
        if (event.answeredInMs !== undefined) this.answerTime.observe({ instrument }, event.answeredInMs / 1000);
        return this.orderFigure(instrument, event.figure);
      case 'lost':
        return this.lost.inc({ instrument });
      case 'substituted':
        return this.substituted.inc({ instrument }, event.characters);
      case 'unwritten':
        return this.unwritten.inc({ instrument });
    }
  }
  /** Counts a two-way figure (runner-contract.ts, `orders` events). */
  private orderFigure(instrument: string, figure: string): void {
    if (figure === 'queries') return this.queries.inc({ instrument });
    if (figure === 'downloads') return this.downloads.inc({ instrument });
    if (figure === 'answered-orders') return this.answers.inc({ instrument, answer: 'orders', reason: '' });
    if (figure === 'answers-failed') return this.answers.inc({ instrument, answer: 'failed', reason: '' });
    if (figure.startsWith('no-information:')) this.answers.inc({ instrument, answer: 'no-information', reason: figure.slice('no-information:'.length) });
  }

  /** Counts one unhandled rejection (wire to ProcessFaults.onRecord). */
  unhandledError(): void {
    this.unhandled.inc();
  }

  /** Counts an upstream answer cut at its size cap. */
  answerOverCap(upstream: string): void {
    this.overCap.inc({ upstream });
  }

  /** Counts one connection an instrument's listening port refused. */
  refusedConnection(instrument: string, reason: string): void {
    this.refused.inc({ instrument, reason });
  }

  /** Mirrors a supervisor status (wire to SupervisorOptions.onStatus). */
  portStatus(status: PortStatus): void {
    this.instrumentSeen(status.instrument);
    for (const state of states) this.portState.set({ instrument: status.instrument, state }, state === status.state ? 1 : 0);
    const counted = this.reconnectsSeen.get(status.instrument) ?? 0;
    if (status.reconnects > counted) this.reconnects.inc({ instrument: status.instrument }, status.reconnects - counted);
    this.reconnectsSeen.set(status.instrument, Math.max(counted, status.reconnects));
  }
  // An instrument's and a sink's counters start at 0 when they first appear: the first rejected result or dead
  // letter is then an increase that rate() and increase() see, not the birth of a series they cannot tell from nothing.
  private instrumentSeen(instrument: string): void {
    if (this.seen.has(`instrument:${instrument}`)) return;
    this.seen.add(`instrument:${instrument}`);
    for (const c of [
      this.messages,
      this.naks,
      this.checksumErrors,
      this.discarded,
      this.lost,
      this.commitFailures,
      this.overLimit,
      this.bytes,
      this.reconnects,
    ]) {
      c.inc({ instrument }, 0);
    }
    for (const c of [this.substituted, this.unwritten]) c.inc({ instrument }, 0);
    for (const outcome of ['inserted', 'absorbed', 'conflict', 'rejected']) this.results.inc({ instrument, outcome }, 0);
    if (!this.options.twoWay?.(instrument)) return;
    this.queries.inc({ instrument }, 0);
    this.downloads.inc({ instrument }, 0);
    this.answerTime.zero({ instrument });
    for (const answer of ['orders', 'failed']) this.answers.inc({ instrument, answer, reason: '' }, 0);
    for (const reason of noInformationReasons) this.answers.inc({ instrument, answer: 'no-information', reason }, 0);
  }

  private sinkSeen(sink: string): void {
    if (this.seen.has(`sink:${sink}`)) return;
    this.seen.add(`sink:${sink}`);
    for (const outcome of ['delivered', 'retry', 'conflict', 'dead']) this.outcomes.inc({ sink, outcome }, 0);
    this.latency.zero({ sink });
  }

  /** Counts a batch's outcomes for a sink; `latenciesMs` holds one entry per delivered row. */
  delivery(sink: string, outcome: DeliveryOutcomeKind, count: number, latenciesMs: readonly number[] = []): void {
    this.sinkSeen(sink);
    if (count > 0) this.outcomes.inc({ sink, outcome }, count);
    for (const ms of latenciesMs) this.latency.observe({ sink }, ms / 1000);
    if (outcome === 'delivered' && count > 0) {
      const rate = this.delivered.get(sink) ?? this.delivered.set(sink, new DeliveryRate(this.windowMs)).get(sink)!;
      rate.add(this.options.now(), count);
    }
  }

  /** Where pending/oldest/dead per sink come from at scrape time (the store's outbox). */
  setBacklogSource(source: () => SinkBacklog[]): void {
    this.backlogSource = source;
  }

  /** Where the store's group-commit figures come from at scrape time (the gateway's one GroupCommit). */
  setCommitSource(source: () => GroupFigures): void {
    this.commitSource = source;
  }

  /** Where the instruments' last messages, the disk and the WAL's size come from at scrape time. */
  setGatewaySource(source: () => GatewayFigures): void {
    this.gatewaySource = source;
  }

  /** The exposition: content type and body for GET /metrics. */
  async render(): Promise<{ contentType: string; body: string }> {
    this.backlog = this.backlogSource();
    this.backlog.forEach((b) => this.sinkSeen(b.sink));
    this.gateway = this.gatewaySource();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Rows per second delivered over the window ending now. */
  drainRate(sink: string): number {
    return this.delivered.get(sink)?.perSecond(this.options.now()) ?? 0;
  }
}
