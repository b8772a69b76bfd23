// What the composition root injects into a gateway; tests and the demo replace the serial ports, sinks and disk probe.
import type { Clock } from '../clock.js';
import type { ClockSyncProbe } from '../clock-sync.js';
import type { Sink } from '../delivery/contract.js';
import type { StatFs } from '../disk-guard.js';
import type { MessageDecoders } from '../driver-registry.js';
import type { Logger } from '../logger.js';
import type { ProcessFaults } from '../process-faults.js';
import type { DriverEvent } from '../runner-contract.js';
import type { SerialPortFactory } from '../transport/endpoint.js';

/** What the composition root injects (tests and the demo replace the serial ports, sinks and disk probe). */
export interface GatewayDeps {
  clock: Clock;
  random: () => number;
  log: Logger;
  createSerialPort?: SerialPortFactory;
  /** Sinks to use instead of building them from the configuration (the demo's embedded PostgreSQL). */
  sinks?: Sink[];
  statfs?: StatFs;
  /** Asks whether the wall clock is synchronised (default: systemd-timesyncd, then timedated). */
  clockSync?: ClockSyncProbe;
  /** From start to retention's first run (default one minute); the clock tests shorten it. */
  retentionFirstRunMs?: number;
  /** How often the disk guard measures free space (default 5 s); the full-disk test shortens it. */
  diskIntervalMs?: number;
  /** Decoders the instruments' runners use instead of their protocol's own (a test's failing decoder). */
  decoders?: MessageDecoders;
  /** Test-only fault hook run just before each commit (see createIngestPort). */
  beforeCommit?: () => void;
  onDriverEvent?: (instrument: string, event: DriverEvent) => void;
  /** Node's process metrics on /metrics, added once the instruments' ports are open (Metrics.collectProcessMetrics). */
  processMetrics?: boolean;
  /** Unhandled rejections of this process (labgate run installs it), shown on /healthz and /metrics. */
  faults?: ProcessFaults;
  /** The file the configuration came from: reload() reads it again (labgate run's SIGHUP), the status page changes it. */
  configFile?: string;
  /** This machine's time zone, preselected for a new instrument on the status page; asked when a page shows it. Default UTC. */
  gatewayZone?: () => string;
  /** Test-only: runs between the fsync of a configuration save and its rename (the crash test stops the process there). */
  beforeConfigRename?: () => void;
}
