// The gateway's store part: the SQLite store every other part reads or writes, opened first and closed last, and the
// backlog sampler that watches its outbox. Opening needs no replay: a capture and its results commit in one
// transaction, so only deliveries that were in flight at the power cut are released.
import type { AnalyteMapping } from '../config/mapping.js';
import type { Config } from '../config/schema.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import { openStore, type Store } from '../store/store.js';
import { BacklogSampler } from './backlog-sampler.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Part } from './lifecycle.js';
import { enabledSinkNames, qcSinkNames } from './sinks.js';

/** Opens the store for the configured sinks (or the injected ones) and samples its backlog. */
export class StorePart implements Part {
  readonly name = 'store';
  store: Store | undefined;
  sampler: BacklogSampler | undefined;

  constructor(
    private readonly running: {
      config: () => Config;
      pending: () => SinkHealth[];
      /** An instrument's mapping now, which the codes it keeps are judged by (store/instrument-codes.ts). */
      mappingOf: (instrumentId: string) => readonly AnalyteMapping[] | undefined;
    },
    private readonly deps: Pick<GatewayDeps, 'clock' | 'log' | 'sinks'>,
  ) {}

  start(): void {
    const { deps } = this;
    const config = this.running.config();
    const { clock } = deps;
    this.store = openStore({
      dataDir: config.gateway.dataDir,
      sinks: deps.sinks ? deps.sinks.map((s) => s.name) : enabledSinkNames(config),
      qcSinks: qcSinkNames(config),
      now: () => clock.now(),
      monotonic: () => clock.monotonic(),
      mappingOf: this.running.mappingOf,
    });
    this.store.outbox.resetInFlight();
    this.sampler = new BacklogSampler({
      store: this.store,
      pending: this.running.pending,
      now: () => clock.now(),
      monotonic: () => clock.monotonic(),
      log: deps.log.child({ part: 'backlog' }),
    });
  }

  stop(): void {
    this.store?.close();
  }
}
