// What the gateway's HTTP listener reads of the running gateway: its own file, since both the listener (web.ts) and the
// pages it loads on the first request (web-pages.ts) take it.
import type { ClockStatus } from './clock-part.js';
import type { ConfigSourceParts } from './config-source.js';
import type { ReloadStatus } from './reload.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../clock.js';
import type { Drain } from '../delivery/drain.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import type { DiskGuard } from '../disk-guard.js';
import type { BoundInstrument } from '../driver-registry.js';
import type { LogSummary } from '../log-summary.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ProcessFaults } from '../process-faults.js';
import type { Retention } from '../store/retention.js';
import type { Store } from '../store/store.js';
import type { PortStatus } from '../transport/supervisor.js';

/** The running parts the listener reads; providers, because they change after start. */
export interface GatewayWebParts {
  config: Config;
  clock: Clock;
  /** Whether the wall clock is synchronised, and its last step (clock-part.ts). */
  clockStatus: () => ClockStatus;
  log: Logger;
  /** Wraps a logger so its repeated lines are summarized (and flushed at stop). */
  summarized: (log: Logger) => LogSummary;
  store: Store;
  metrics: Metrics;
  faults?: ProcessFaults;
  ready: () => boolean;
  disk: () => DiskGuard | undefined;
  instruments: () => PortStatus[];
  /** Detection on the serial ports no instrument names (gateway/new-ports.ts). */
  newPorts?: () => PortStatus[];
  sinkHealth: () => SinkHealth[];
  drains: () => Drain[];
  bound: () => ReadonlyMap<string, BoundInstrument>;
  retention: () => Retention | undefined;
  /** The last configuration reload's outcome (null before the first, or without a configuration file). */
  reload?: () => ReloadStatus | null;
  /** The configuration pages (/configure), when the gateway runs from a configuration file it can reload. */
  configuration?: Omit<ConfigSourceParts, 'bound' | 'instruments' | 'store' | 'log' | 'now' | 'delivered'>;
}
