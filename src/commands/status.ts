// `labgate status --config FILE [--json]`: per sink, what is pending, sent, dead and in conflict, how old the oldest
// pending result is, the measured rate and when the backlog will be drained. Reads beside a running gateway.
import type { Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { formatReport, sinkReport } from '../delivery/status-report.js';
import { openStore } from '../store/store.js';

const RATE_WINDOW_MS = 5 * 60_000;

const help = `Usage: labgate status [--config FILE] [--json]

Per sink: pending, sent, dead, conflicts, oldest pending age, rate over the last 5 minutes,
and the estimated time to drain the backlog at that rate.
  --config FILE   default /etc/labgate/labgate.yaml
  --json          one JSON document instead of text`;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options: { ...configOption, json: { type: 'boolean' } } }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const config = loadConfig(values.config ?? '/etc/labgate/labgate.yaml');
  const store = openStore({ dataDir: config.gateway.dataDir, sinks: [], now: Date.now, lock: false });
  try {
    const now = Date.now();
    const reports = store.outbox.counts().map((c) => sinkReport(c, store.outbox.sentSince(c.sink, now - RATE_WINDOW_MS), RATE_WINDOW_MS, now));
    io.stdout.write(
      values.json ? JSON.stringify({ gateway: config.gateway.id, at: new Date(now).toISOString(), sinks: reports }) + '\n' : formatReport(reports),
    );
    return 0;
  } finally {
    store.close();
  }
};
