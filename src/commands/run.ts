// `labgate run --config FILE`: the service systemd starts. The only place that reads the environment, handles
// signals and reports readiness to the service manager.
import { writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Command } from '../cli.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import type { StatFs } from '../disk-guard.js';
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

export const command: Command = async (args, io) => {
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
  const gateway = new Gateway(config, { clock: systemClock, random: Math.random, log, processMetrics: true, faults, ...faultHooks(io.env) });
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
  rejectLater(io.env);
  const stopWatchdog = notifier.startWatchdog(systemClock);
  log.info({ signal: await signal }, 'stopping');
  stopWatchdog();
  await notifier.stopping();
  await gateway.stop();
  log.flush();
  return 0;
};

/** Test-only fault hooks (test/e2e), each off unless its variable is set. */
function faultHooks(env: NodeJS.ProcessEnv): Pick<GatewayDeps, 'statfs' | 'diskIntervalMs' | 'beforeCommit'> {
  const statfs = faultStatfs(env['LABGATE_FAULT_STATFS_FILE']);
  const diskIntervalMs = positive(env['LABGATE_FAULT_DISK_INTERVAL_MS']);
  const pauseMs = positive(env['LABGATE_FAULT_PAUSE_BEFORE_COMMIT_MS']);
  return {
    ...(statfs ? { statfs } : {}),
    ...(diskIntervalMs ? { diskIntervalMs } : {}),
    ...(pauseMs ? { beforeCommit: pauseBeforeCommit(pauseMs) } : {}),
  };
}

/** Leaves one promise rejection unhandled after start (the unhandled-rejection test). */
function rejectLater(env: NodeJS.ProcessEnv): void {
  const ms = positive(env['LABGATE_FAULT_UNHANDLED_REJECTION_MS']);
  if (ms) setTimeout(() => void Promise.reject(new Error('labgate fault: an unhandled rejection')), ms);
}

/** Free bytes read from a file stand in for the filesystem's (the full-disk test). */
function faultStatfs(file: string | undefined): StatFs | undefined {
  if (!file) return undefined;
  return async () => ({ bavail: Number((await readFile(file, 'utf8')).trim()), bsize: 1 });
}

/** Blocks the event loop between receipt and commit, announced on stderr first, so a test can kill the gateway there. */
function pauseBeforeCommit(ms: number): () => void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  return () => {
    writeSync(2, `labgate fault: pausing ${ms} ms before commit\n`);
    Atomics.wait(cell, 0, 0, ms);
  };
}

function positive(value: string | undefined): number | undefined {
  const n = Number(value);
  return value && Number.isFinite(n) && n > 0 ? n : undefined;
}
