// The composition root's front door: parses the command name and hands the rest to that command's module.
// Only the command modules read the environment, open devices and handle signals.
import type { CliIo, Command } from './commands/command.js';
import { LabgateError } from './errors.js';

interface CommandEntry {
  summary: string;
  load: () => Promise<{ command: Command }>;
}

/** Every subcommand, loaded lazily so `--help` starts fast. */
const commands: Record<string, CommandEntry> = {};

/** Registers a subcommand; called once per command at module load below. */
function register(name: string, summary: string, load: CommandEntry['load']): void {
  commands[name] = { summary, load };
}

register('run', 'run the gateway (the systemd service)', () => import('./commands/run.js'));
register('decode', 'decode a capture as the gateway would, one JSON line per result', () => import('./commands/decode.js'));
register('check-config', 'validate the configuration file without starting anything', () => import('./commands/check-config.js'));
register('status', 'per sink: pending, sent, dead, conflicts, oldest pending, rate, time to drain', () => import('./commands/status.js'));
register('dead-letter', 'list, retry or purge results a sink refused for good (audited)', () => import('./commands/dead-letter.js'));
register('pg-migrate', 'create or upgrade the central PostgreSQL schema, or print its SQL', () => import('./commands/pg-migrate.js'));
register('fhir-jwks', "print the public JWKS of the FHIR sink's SMART Backend Services key, to register it", () => import('./commands/fhir-jwks.js'));
register('emulate', 'play an ASTM analyzer on a serial port, to try a gateway without one', () => import('./commands/emulate.js'));
register('demo', 'run the whole pipeline on this machine (emulated analyzer, embedded PostgreSQL, test LIMS) with faults', () => import('./commands/demo.js'));

const usage = (): string =>
  [
    'labgate — instrument gateway for clinical laboratories',
    '',
    'Usage: labgate <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(14)} ${c.summary}`),
    '',
    'Run `labgate <command> --help` for the options of one command.',
  ].join('\n');

/** Runs the CLI and returns the exit code. */
export async function main(argv: string[], io: CliIo = defaultIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  const entry = commands[name];
  if (!entry) {
    io.stderr.write(`labgate: unknown command '${name}'\n\n${usage()}\n`);
    return 2;
  }
  try {
    const { command } = await entry.load();
    return await command(rest, io);
  } catch (err) {
    if (err instanceof LabgateError) {
      io.stderr.write(`labgate ${name}: ${err.message}\n`);
      return err.code === 'USAGE' || err.code.startsWith('CONFIG') ? 2 : 1;
    }
    throw err;
  }
}

function defaultIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
