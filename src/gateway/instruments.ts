// One supervised port per instrument: the supervisor (re)opens the transport, and each fresh transport gets a
// new driver runner. Instruments share nothing but the IngestPort, so one analyzer's trouble stays its own
// (ARCHITECTURE.md invariant 7).
import type { Config, InstrumentConfig } from '../config/schema.js';
import { DetectingPort } from '../detect/detecting-port.js';
import type { DetectorOptions } from '../detect/detector.js';
import { detectionScope, type DetectionScope } from '../detect/setting.js';
import type { Clock } from '../clock.js';
import type { DriverEvent, IngestPort } from '../runner-contract.js';
import type { BoundInstrument } from '../driver-registry.js';
import { JunkSampler } from '../junk-sampler.js';
import { RejectedLimit } from '../rejected-limit.js';
import { LogSummary } from '../log-summary.js';
import { instrumentLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { OrdersPort } from '../orders/desk.js';
import { endpointFor, openListening, type SerialPortFactory, type TransportEndpoint } from '../transport/endpoint.js';
import { PortSupervisor, type PortStatus } from '../transport/supervisor.js';

/** What the gateway starts, stops and reads of an instrument's port: a driver's supervisor, or detection. */
export interface InstrumentPort {
  start(): void;
  stop(): Promise<void>;
  snapshot(): PortStatus;
}

/** A running instrument: its port, the endpoint it opens (none while detecting), and its log (flushed at stop). */
export interface InstrumentHandle {
  id: string;
  supervisor: InstrumentPort;
  endpoint: Pick<TransportEndpoint, 'close'>;
  log: LogSummary;
}

export interface InstrumentDeps {
  /** The bound drivers and profiles as configured now (a reload replaces them). */
  bound: () => ReadonlyMap<string, BoundInstrument>;
  ingest: IngestPort;
  accepting: () => boolean;
  clock: Clock;
  random: () => number;
  log: Logger;
  metrics: Metrics;
  createSerialPort?: SerialPortFactory;
  /** Extra listener for driver events (tests, the demo's progress). */
  onEvent?: (instrument: string, event: DriverEvent) => void;
  /** What an instrument sending only rejected messages may journal a minute (gateway.rejectedLimit); absent: no limit. */
  rejectedLimits?: { messagesPerMinute: number; mbPerMinute: number };
  /** The LIMS's orders and the store's ledger, for two-way instruments. */
  orders?: OrdersPort;
  /** Detection's timing (tests shorten it). */
  detectTiming?: Partial<Pick<DetectorOptions, 'gapMs' | 'silenceMs' | 'maxBurstBytes'>>;
}

/** Creates (not starts) a supervisor for every enabled instrument. */
export function superviseInstruments(config: Config, deps: InstrumentDeps): InstrumentHandle[] {
  return config.instruments.filter((instrument) => instrument.enabled).map((instrument) => superviseInstrument(instrument, deps));
}

/** Creates (not starts) one instrument's supervisor: a driver's, or detection's while its serial settings are `auto`. */
export function superviseInstrument(instrument: InstrumentConfig, deps: InstrumentDeps): InstrumentHandle {
  const scope = detectionScope(instrument.transport);
  if (scope !== null && instrument.transport.kind === 'serial') return detecting(instrument, instrument.transport.path, scope, deps);
  const bound = deps.bound().get(instrument.id);
  if (!bound) throw new Error(`instrument ${instrument.id} has no bound driver`);
  // Read at each message, so a reload's new mapping or clock zone reaches the next one without a new session.
  const profile = (): BoundInstrument['profile'] => deps.bound().get(instrument.id)?.profile ?? bound.profile;
  const endpoint = endpointFor(instrument.transport, { createSerialPort: deps.createSerialPort });
  // One place for every line the instrument's runner and supervisor write: repeats under a flood are summarized.
  const log = new LogSummary(instrumentLogger(deps.log, instrument.id), deps.clock);
  const junk = new JunkSampler();
  const limits = deps.rejectedLimits;
  const rejectedLimit = limits && {
    ...limits,
    limit: new RejectedLimit({ messagesPerMinute: limits.messagesPerMinute, bytesPerMinute: limits.mbPerMinute * 1024 * 1024 }),
  };
  const onEvent = (event: DriverEvent): void => {
    supervisor.recordEvent(event);
    deps.metrics.driverEvent(instrument.id, event);
    deps.onEvent?.(instrument.id, event);
  };
  const supervisor: PortSupervisor = new PortSupervisor({
    instrument: instrument.id,
    endpoint: endpoint.description,
    open: (signal) => endpoint.open(signal),
    attach: (transport) => {
      const runner = bound.driver.createRunner({
        get profile() {
          return profile();
        },
        transport,
        ingest: deps.ingest,
        accepting: deps.accepting,
        clock: deps.clock,
        log,
        onEvent,
        junk,
        ...(rejectedLimit ? { rejectedLimit } : {}),
        ...(deps.orders ? { orders: deps.orders } : {}),
      });
      runner.start();
      return runner;
    },
    clock: deps.clock,
    log,
    random: deps.random,
    ...(instrument.transport.kind === 'tcp-server' ? { waitingReason: 'waiting for the analyzer to connect', listening: true } : {}),
    onStatus: (status: PortStatus) => deps.metrics.portStatus(status),
  });
  endpoint.onRefused?.((refusal) => {
    supervisor.recordRefused(refusal);
    deps.metrics.refusedConnection(instrument.id, refusal.reason);
  });
  return { id: instrument.id, supervisor, endpoint, log };
}

// An instrument whose serial settings are `auto`: listened to, never answered, until the configuration names them.
function detecting(instrument: InstrumentConfig, path: string, scope: DetectionScope, deps: InstrumentDeps): InstrumentHandle {
  const log = new LogSummary(instrumentLogger(deps.log, instrument.id), deps.clock);
  const port = new DetectingPort({
    instrument: instrument.id,
    path,
    driver: instrument.driver,
    scope,
    open: (setting, signal) => openListening(path, setting, deps.createSerialPort, signal),
    clock: deps.clock,
    log,
    random: deps.random,
    ...(deps.detectTiming ? { timing: deps.detectTiming } : {}),
    onStatus: (status) => deps.metrics.portStatus(status),
  });
  return { id: instrument.id, supervisor: port, endpoint: { close: async () => {} }, log };
}
