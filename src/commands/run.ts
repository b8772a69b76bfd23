// `labgate run --config FILE`: the service systemd starts. The only place that reads the environment, handles
// signals and reports readiness to the service manager.
import type { CliIo, Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { systemClock } from '../clock.js';
import { LabgateError } from '../errors.js';
import { LogSummary } from '../log-summary.js';
import { ProcessFaults } from '../process-faults.js';
import { Gateway } from '../gateway/gateway.js';
import type { GatewayDeps } from '../gateway/gateway-deps.js';
import { createLogger, type Logger } from '../logger.js';
import { SystemdNotifier } from '../systemd/notify.js';

const help = `Usage: labgate run --config FILE

Runs the gateway: opens the store in gateway.dataDir, starts the sinks' drains, the HTTP listener
(/healthz, /metrics, the status page) and every enabled instrument. SIGTERM or SIGINT stops it cleanly.
SIGHUP (systemctl reload labgate) reads FILE again and applies what changed to the instruments without
stopping the others or the sinks; an invalid file changes nothing and says why (log, status page, /healthz).`;

export const command: Command = (args, io) => runGateway(args, io);

/**
 * What a test adds to `labgate run` (test/support/run-with-faults.ts, never the installed command): fault hooks in
 * the gateway's parts, and a callback once the gateway reported ready.
 */
export interface RunHooks {
  deps?: Pick<GatewayDeps, 'statfs' | 'diskIntervalMs' | 'beforeCommit' | 'beforeConfigRename' | 'clockSync' | 'retentionFirstRunMs'>;
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
  const gateway = new Gateway(config, {
    clock: systemClock,
    random: Math.random,
    log,
    processMetrics: true,
    faults,
    configFile: file,
    // Asked of ICU when a page shows it: finding the machine's zone costs a start after a power cut several milliseconds.
    gatewayZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
    ...hooks.deps,
  });
  const reloads = reloadOnHangup(gateway, log);
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
  reloads.ready();
  hooks.afterReady?.();
  const stopWatchdog = notifier.startWatchdog(systemClock);
  log.info({ signal: await signal }, 'stopping');
  stopWatchdog();
  await notifier.stopping();
  await reloads.stop();
  await gateway.stop();
  log.flush();
  return 0;
}

// SIGHUP reloads the configuration. Node's default for SIGHUP is to exit, so the handler is there from the start; a
// SIGHUP before the gateway is ready is taken once it is, none after a stop began, and a reload in progress finishes
// before the instruments stop.
function reloadOnHangup(gateway: Gateway, log: Logger): { ready(): void; stop(): Promise<void> } {
  let state: 'starting' | 'asked' | 'running' | 'stopping' = 'starting';
  let last: Promise<unknown> = Promise.resolve();
  const reload = (): void => {
    last = gateway.reload().catch((err: unknown) => log.error({ err }, 'configuration reload failed (a bug); the instruments may be as before it'));
  };
  process.on('SIGHUP', () => {
    if (state === 'running') reload();
    else if (state === 'starting') state = 'asked';
  });
  return {
    ready: () => {
      if (state === 'asked') reload();
      state = 'running';
    },
    stop: async () => {
      state = 'stopping';
      await last;
    },
  };
}
