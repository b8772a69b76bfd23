// `labgate dead-letter list|retry|purge --config FILE [--sink S] [--key K] [--all] [--yes]`: the operator's hands
// on results a sink refused for good. retry and purge are audited with the OS user as actor; purge asks first.
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import type { CliIo, Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { LabgateError } from '../errors.js';
import type { DeadLetterFilter } from '../store/outbox-operator.js';
import { openStore } from '../store/store.js';

const help = `Usage: labgate dead-letter list|retry|purge [--config FILE] [--sink S] [--key K] [--all] [--yes] [--json]

  list     dead letters (sink, dedup key, attempts, reason); without a filter, all of them
  retry    make the selected dead letters pending again (after the cause is fixed)
  purge    delete the selected dead letters from the outbox (the stored result stays); asks unless --yes
retry and purge need --sink, --key or --all, and are recorded in the audit log with your user name.`;

const options = {
  ...configOption,
  sink: { type: 'string' },
  key: { type: 'string' },
  all: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  json: { type: 'boolean' },
} as const;

export const command: Command = async (args, io) => {
  const { values, positionals } = commandArgs({ args, options, allowPositionals: true }, help);
  const action = positionals[0];
  if (values.help || action === undefined) {
    io.stdout.write(help + '\n');
    return values.help ? 0 : 2;
  }
  if (!['list', 'retry', 'purge'].includes(action)) throw new LabgateError('USAGE', `unknown action '${action}'\n${help}`);
  const filter: DeadLetterFilter = {
    ...(values.sink ? { sink: values.sink } : {}),
    ...(values.key ? { key: values.key } : {}),
    ...(values.all ? { all: true } : {}),
  };
  if (action !== 'list' && !filter.sink && !filter.key && !filter.all) throw new LabgateError('USAGE', `${action} needs --sink, --key or --all`);
  const config = loadConfig(values.config ?? '/etc/labgate/labgate.yaml');
  const store = openStore({ dataDir: config.gateway.dataDir, sinks: [], now: Date.now, lock: false });
  try {
    // The outbox's results and the dispatches of two-way instruments (sink lims-dispatch, key orderId|instrument).
    const letters = [...store.outbox.deadLetters(filter, Number.MAX_SAFE_INTEGER), ...store.orders.deadLetters.deadLetters(filter, Number.MAX_SAFE_INTEGER)];
    if (action === 'list') {
      io.stdout.write(values.json ? JSON.stringify(letters) + '\n' : formatList(letters));
      return 0;
    }
    if (letters.length === 0) {
      io.stdout.write('no dead letters match\n');
      return 0;
    }
    if (action === 'purge' && !values.yes && !(await confirm(io, `Purge ${letters.length} dead letter(s)? They will not be delivered. Type "yes": `))) {
      io.stderr.write('not purged\n');
      return 1;
    }
    const actor = operator(io);
    const [outbox, dispatches] = [store.outbox, store.orders.deadLetters];
    const n =
      action === 'retry'
        ? outbox.retryDeadLetters(filter, actor) + dispatches.retryDeadLetters(filter, actor)
        : outbox.purgeDeadLetters(filter, actor) + dispatches.purgeDeadLetters(filter, actor);
    io.stdout.write(`${action === 'retry' ? 'retrying' : 'purged'} ${n} dead letter(s) (audited as ${actor})\n`);
    return 0;
  } finally {
    store.close();
  }
};

function formatList(letters: readonly { sink: string; dedupKey: string; attempts: number; reason: string | null; updatedAt: number }[]): string {
  if (letters.length === 0) return 'no dead letters\n';
  return letters.map((l) => `${l.sink}\t${l.dedupKey}\t${l.attempts} attempt(s)\t${new Date(l.updatedAt).toISOString()}\t${l.reason ?? ''}`).join('\n') + '\n';
}

async function confirm(io: CliIo, question: string): Promise<boolean> {
  io.stdout.write(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) return line.trim().toLowerCase() === 'yes';
    return false;
  } finally {
    rl.close();
  }
}

function operator(io: CliIo): string {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? io.env.LOGNAME ?? 'unknown';
  }
}
