// Everything the demo runs beside the gateway, started in order and stopped in reverse: a temporary data
// directory, the embedded central PostgreSQL (migrated), the LIMS test server, with --fhir the FHIR test server, the
// virtual serial line, and the gateway's log file. Gateways are opened on it as often as the scenario needs (the crash-and-restart).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Config } from '../config/schema.js';
import { systemClock } from '../clock.js';
import { type DriverEvent } from '../runner-contract.js';
import { Gateway } from '../gateway/gateway.js';
import { buildSinks } from '../gateway/sinks.js';
import { createLimsServer, type LimsServer } from '../lims-server/server.js';
import { createLogger, type Logger } from '../logger.js';
import { CentralDatabase } from './central-database.js';
import { startDemoFhir, type DemoFhir } from './demo-fhir.js';
import { demoConfigPath, loadDemoConfig } from './demo-config.js';
import { ObservedSink, type OutcomeListener } from './observed-sink.js';
import { VirtualSerialLine } from './virtual-serial-line.js';

/** A gateway the demo opened, with the sinks it can watch and "crash". */
export interface DemoGateway {
  gateway: Gateway;
  sinks: ObservedSink[];
  httpUrl: string;
}

/** What gateways see and report to. */
export interface DemoListeners {
  onOutcomes: OutcomeListener;
  onDriverEvent: (instrument: string, event: DriverEvent) => void;
}

/** The demo's world. */
export class DemoEnvironment {
  private httpPort = 0;
  private readonly gateways: Gateway[] = [];

  private constructor(
    readonly dir: string,
    readonly config: Config,
    readonly central: CentralDatabase,
    readonly lims: LimsServer,
    /** The FHIR test server, with --fhir; null otherwise. */
    readonly fhir: DemoFhir | null,
    readonly line: VirtualSerialLine,
    /** The querying HL7 analyzer's line (the second instrument of config/demo.yaml), when it has one. */
    readonly hl7Line: VirtualSerialLine | null,
    readonly logFile: string,
    private readonly log: Logger,
    private readonly keep: boolean,
  ) {}

  /** Starts the central database and the LIMS, then validates config/demo.yaml with their addresses. */
  static async start(options: { keep: boolean; configFile?: string; fhir?: boolean }): Promise<DemoEnvironment> {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-demo-'));
    const cleanup: (() => Promise<void>)[] = [async () => (options.keep ? undefined : rmSync(dir, { recursive: true, force: true }))];
    try {
      const central = await CentralDatabase.start();
      cleanup.unshift(() => central.stop());
      const secret = randomBytes(24).toString('base64url');
      const limsSecretFile = join(dir, 'lims-client-secret');
      writeFileSync(limsSecretFile, secret + '\n', { mode: 0o600 });
      const lims = createLimsServer({ clients: [{ clientId: 'labgate-demo', clientSecret: secret }], resourcePath: '/api/v1/results' });
      await lims.start();
      cleanup.unshift(() => lims.stop());
      const fhir = options.fhir ? await startDemoFhir(dir) : null;
      if (fhir) cleanup.unshift(() => fhir.server.stop());
      const config = loadDemoConfig(options.configFile ?? demoConfigPath(), {
        dataDir: join(dir, 'data'),
        postgresUrl: central.url,
        limsUrl: lims.url,
        limsSecretFile,
        ...(fhir ? { fhir: { url: fhir.server.url, tokenUrl: fhir.server.tokenUrl, keyFile: fhir.keyFile } } : {}),
      });
      const instrument = config.instruments[0];
      if (config.sinks.lims?.auth.kind !== 'oauth2' || config.sinks.lims.resourcePath !== '/api/v1/results' || !config.sinks.postgres) {
        throw new Error('config/demo.yaml must keep both sinks, oauth2 for the LIMS and resourcePath /api/v1/results');
      }
      if (instrument?.transport.kind !== 'serial' || instrument.driver !== 'astm') throw new Error('config/demo.yaml must start with a serial ASTM instrument');
      await central.migrate(config.sinks.postgres.schema);
      const logFile = join(dir, 'gateway.log');
      const log = createLogger({ level: config.gateway.logLevel, gateway: config.gateway.id, destination: pino.destination({ dest: logFile, sync: true }) });
      const line = new VirtualSerialLine(instrument.transport.path);
      const second = config.instruments[1];
      const hl7Line = second?.driver === 'hl7' && second.transport.kind === 'serial' ? new VirtualSerialLine(second.transport.path) : null;
      return new DemoEnvironment(dir, config, central, lims, fhir, line, hl7Line, logFile, log, options.keep);
    } catch (err) {
      for (const step of cleanup) await step().catch(() => {});
      throw err;
    }
  }

  /** The emulated analyzer's instrument entry (the first of config/demo.yaml). */
  get instrument(): Config['instruments'][number] {
    return this.config.instruments[0]!;
  }

  /** The HL7 analyzer's instrument entry (the second of config/demo.yaml), when there is one. */
  get hl7Instrument(): Config['instruments'][number] | null {
    return this.hl7Line ? this.config.instruments[1]! : null;
  }

  /** Opens a Gateway on the data directory with observed sinks; later gateways keep the first one's HTTP port. */
  async openGateway(listeners: DemoListeners): Promise<DemoGateway> {
    const config: Config = { ...this.config, gateway: { ...this.config.gateway, http: { ...this.config.gateway.http, port: this.httpPort } } };
    const real = await buildSinks(config, { log: this.log, now: systemClock.now, monotonic: systemClock.monotonic });
    const sinks = real.map((sink) => new ObservedSink(sink, listeners.onOutcomes));
    const gateway = new Gateway(config, {
      clock: systemClock,
      random: Math.random,
      log: this.log,
      // Each instrument's port is bound to its own line.
      createSerialPort: (options) => (this.hl7Line?.path === options.path ? this.hl7Line : this.line).createSerialPort(options),
      sinks,
      onDriverEvent: listeners.onDriverEvent,
      // As `labgate run`: /metrics shows the process's memory and event-loop delay (the fleet dashboard's last row).
      processMetrics: true,
    });
    this.gateways.push(gateway);
    try {
      const { httpPort } = await gateway.start();
      this.httpPort = httpPort;
      return { gateway, sinks, httpUrl: `http://${config.gateway.http.host}:${httpPort}` };
    } catch (err) {
      await gateway.stop().catch(() => {});
      throw err;
    }
  }

  /** Stops everything the environment started; the data directory stays when --keep was given. */
  async stop(): Promise<void> {
    for (const gateway of this.gateways) if (gateway.isReady()) await gateway.stop().catch(() => {});
    this.line.remove();
    await this.lims.stop().catch(() => {});
    await this.fhir?.server.stop().catch(() => {});
    await this.central.stop().catch(() => {});
    this.log.flush();
    if (!this.keep) rmSync(this.dir, { recursive: true, force: true });
  }
}
