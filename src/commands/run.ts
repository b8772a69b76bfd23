// `labgate run --config FILE`: the service systemd starts. The only place that reads the environment, handles
// signals and reports readiness to the service manager.
import type { CliIo, Command } from '../cli.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { systemClock } from '../clock.js';
import { LabgateError } from '../errors.js';
import { LogSummary } from '../log-summary.js';
import { ProcessFaults } from '../process-faults.js';
import { Gateway, type GatewayDeps } from '../gateway/gateway.js';
import { createLogger } from '../logger.js';
import { SystemdNotifier } from '../systemd/notify.js';

const help = `Usage: labgate run --config FILE

Runs the gateway: opens the store in gateway.dataDir, starts the sinks' drains, the HTTP listener
(/healthz, /metrics, the status page) and every enabled instrument. SIGTERM or SIGINT stops it cleanly.`;

export const command: Command = (args, io) => runGateway(args, io);

/**
 * What a test adds to `labgate run` (test/support/run-with-faults.ts, never the installed command): fault hooks in
 * the gateway's parts, and a callback once the gateway reported ready.
 */
export interface RunHooks {
  deps?: Pick<GatewayDeps, 'statfs' | 'diskIntervalMs' | 'beforeCommit'>;
  afterReady?: () => void;
}

/** `labgate run`, with a test's hooks when given. */
export async function runGateway(args: string[], io: CliIo, hooks: RunHooks = {}): Promise<number> {
  const { values } = commandArgs({ args, options: configOption }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const file = values.config ?? io.env['LABGATE_CONFIG'] ?? '/etc/labgate/labgate.yaml';
  const config = loadConfig(file);
  const log = createLogger({ level: config.gateway.logLevel, gateway: config.gateway.id });
  // A bug hit on every request would otherwise log a stack per request: repeats are summarized like any other line.
  const errors = new LogSummary(log, systemClock);
  const faults = new ProcessFaults(errors);
  faults.install(process);
  const notifier = new SystemdNotifier({ env: io.env, pid: process.pid, log });
  const gateway = new Gateway(config, { clock: systemClock, random: Math.random, log, processMetrics: true, faults, ...hooks.deps });
  // Listening before start: a SIGTERM during start-up must take the clean path, not Node's default (death by signal).
  const signal = new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  try {
    await gateway.start();
  } catch (err) {
    await gateway.stop().catch(() => {});
    if (err instanceof LabgateError) throw err;
    log.fatal({ err }, 'gateway failed to start');
    log.flush();
    return 1;
  }
  await notifier.ready('accepting results');
  hooks.afterReady?.();
  const stopWatchdog = notifier.startWatchdog(systemClock);
  log.info({ signal: await signal }, 'stopping');
  stopWatchdog();
  await notifier.stopping();
  await gateway.stop();
  log.flush();
  return 0;
}
