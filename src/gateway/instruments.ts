// One supervised port per instrument: the supervisor (re)opens the transport, and each fresh transport gets a
// new driver runner. Instruments share nothing but the IngestPort, so one analyzer's trouble stays its own
// (ARCHITECTURE.md invariant 7).
import type { Config } from '../config/schema.js';
import type { Clock, DriverEvent, IngestPort } from '../driver.js';
import type { BoundInstrument } from '../drivers.js';
import { JunkSampler } from '../junk-sampler.js';
import { LogSummary } from '../log-summary.js';
import { instrumentLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { endpointFor, type SerialPortFactory, type TransportEndpoint } from '../transport/endpoint.js';
import { PortSupervisor, type PortStatus } from '../transport/supervisor.js';

/** A running instrument: its supervisor, the endpoint it opens, and its log (flushed at stop). */
export interface InstrumentHandle {
  id: string;
  supervisor: PortSupervisor;
  endpoint: TransportEndpoint;
  log: LogSummary;
}

export interface InstrumentDeps {
  bound: Map<string, BoundInstrument>;
  ingest: IngestPort;
  accepting: () => boolean;
  clock: Clock;
  random: () => number;
  log: Logger;
  metrics: Metrics;
  createSerialPort?: SerialPortFactory;
  /** Extra listener for driver events (tests, the demo's progress). */
  onEvent?: (instrument: string, event: DriverEvent) => void;
}

/** Creates (not starts) a supervisor for every enabled instrument. */
export function superviseInstruments(config: Config, deps: InstrumentDeps): InstrumentHandle[] {
  return config.instruments
    .filter((instrument) => instrument.enabled)
    .map((instrument) => {
      const bound = deps.bound.get(instrument.id);
      if (!bound) throw new Error(`instrument ${instrument.id} has no bound driver`);
      const endpoint = endpointFor(instrument.transport, { createSerialPort: deps.createSerialPort });
      // One place for every line the instrument's runner and supervisor write: repeats under a flood are summarized.
      const log = new LogSummary(instrumentLogger(deps.log, instrument.id), deps.clock);
      const junk = new JunkSampler();
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
            profile: bound.profile,
            transport,
            ingest: deps.ingest,
            accepting: deps.accepting,
            clock: deps.clock,
            log,
            onEvent,
            junk,
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
    });
}
