// `labgate check-config --config FILE`: validates the configuration without opening anything but the files it names.
// Exit 0 when valid (warnings are printed), 2 with every problem listed when not (the CLI maps CONFIG_UNREADABLE to
// 2 as well). The rules on the files themselves are in config/file-checks.ts.
import type { Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { fileChecks } from '../config/file-checks.js';
import { relabelProblems } from '../config/instruments-file.js';
import { readConfiguration } from '../config/load.js';
import { loincWarnings } from '../config/loinc.js';
import { openPortWarnings } from '../config/open-ports.js';
import { formatProblems } from '../config/problem.js';

const help = `Usage: labgate check-config [--config FILE] [--credentials DIR] [--schema-only]

Validates the configuration file together with its instruments file (gateway.instrumentsFile, default
<dataDir>/instruments.yaml: the instruments the status page manages), as one document exactly as the service runs
them, and prints every problem with its path (the instruments file's as FILE:instruments[N]...), then checks the
files it names:
each must exist (with the service stopped, a /run/credentials/labgate.service/secret_<name> path is looked for
as DIR/<name>, the unit's LoadCredential source), and secret files and the configuration should not be readable
by every user (a warning), and a mapping's LOINC whose check digit is wrong is a warning too (the status page
refuses one), and so is an instrument listening on TCP without transport.allow (anyone on the network can hold it).
  --config FILE        default /etc/labgate/labgate.yaml
  --credentials DIR    default /etc/labgate/credentials
  --schema-only        the content alone, not the files it names (an installer's check before secrets exist)
Exit codes: 0 valid (perhaps with warnings), 2 invalid or unreadable.`;

export const command: Command = async (args, io) => {
  const options = { ...configOption, credentials: { type: 'string' }, 'schema-only': { type: 'boolean' } } as const;
  const { values } = commandArgs({ args, options }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const file = values.config ?? '/etc/labgate/labgate.yaml';
  const { result, layout } = readConfiguration(file);
  if (result.kind === 'invalid') return report(io, file, result.problems);
  const { config } = result;
  const files = values['schema-only']
    ? { problems: [], warnings: [] }
    : fileChecks(config, file, values.credentials ? { credentialsDir: values.credentials } : {});
  const loincs = [...loincWarnings(config.instruments), ...openPortWarnings(config.instruments)];
  files.warnings.push(...(layout ? relabelProblems(loincs, layout.mainCount, layout.instrumentsFile) : loincs));
  if (files.warnings.length) io.stderr.write(`${file}: warning${files.warnings.length === 1 ? '' : 's'}\n${formatProblems(files.warnings)}\n`);
  if (files.problems.length) return report(io, file, files.problems);
  const sinks = Object.entries(config.sinks)
    .filter(([, s]) => s?.enabled)
    .map(([name]) => name);
  const managed = config.instruments.length - (layout?.mainCount ?? config.instruments.length);
  const from = !layout ? '' : layout.instrumentsText === null ? `; no ${layout.instrumentsFile} yet` : `, ${managed} of them from ${layout.instrumentsFile}`;
  io.stdout.write(
    `${file}: ok — gateway ${config.gateway.id}, ${config.instruments.length} instrument(s) ` +
      `(${config.instruments.filter((i) => i.enabled).length} enabled${from}), sinks: ${sinks.join(', ') || 'none'}\n`,
  );
  return 0;
};

function report(io: Parameters<Command>[1], file: string, problems: Parameters<typeof formatProblems>[0]): number {
  const n = problems.length;
  io.stderr.write(`${file}: ${n} problem${n === 1 ? '' : 's'}\n${formatProblems(problems)}\n`);
  return 2;
}
