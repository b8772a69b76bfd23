// `labgate check-config --config FILE`: validates the configuration without opening anything.
// Exit 0 when valid, 2 with every problem listed when not (the CLI maps CONFIG_UNREADABLE to 2 as well).
import type { Command } from '../cli.js';
import { commandArgs, configOption } from './args.js';
import { checkConfigFile, formatProblems } from '../config/load.js';

const help = `Usage: labgate check-config [--config FILE]

Validates the configuration file and prints every problem with its path.
  --config FILE   default /etc/labgate/labgate.yaml
Exit codes: 0 valid, 2 invalid or unreadable.`;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options: configOption }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const file = values.config ?? '/etc/labgate/labgate.yaml';
  const result = checkConfigFile(file);
  if (result.kind === 'invalid') {
    const n = result.problems.length;
    io.stderr.write(`${file}: ${n} problem${n === 1 ? '' : 's'}\n${formatProblems(result.problems)}\n`);
    return 2;
  }
  const { config } = result;
  const sinks = Object.entries(config.sinks)
    .filter(([, s]) => s?.enabled)
    .map(([name]) => name);
  io.stdout.write(
    `${file}: ok — gateway ${config.gateway.id}, ${config.instruments.length} instrument(s) ` +
      `(${config.instruments.filter((i) => i.enabled).length} enabled), sinks: ${sinks.join(', ') || 'none'}\n`,
  );
  return 0;
};
