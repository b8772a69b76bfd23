// `labgate pg-migrate --config FILE [--print]`: creates or upgrades the central schema (result_load and its audit
// table), or prints the SQL so a DBA can review and apply it. Idempotent and versioned.
import pg from 'pg';
import type { Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { LabgateError } from '../errors.js';
import { poolConfig } from '../sinks/postgres-connection.js';
import { migrateCentral, migrationScript } from '../sinks/postgres-schema.js';

const help = `Usage: labgate pg-migrate [--config FILE] [--print]

Creates or upgrades result_load and result_load_audit in sinks.postgres.schema.
  --config FILE   default /etc/labgate/labgate.yaml
  --print         print the SQL instead of running it (safe to apply on any version)`;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options: { ...configOption, print: { type: 'boolean' } } }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const config = loadConfig(values.config ?? '/etc/labgate/labgate.yaml');
  const settings = config.sinks.postgres;
  if (!settings) throw new LabgateError('USAGE', 'the configuration has no sinks.postgres section');
  if (values.print) {
    io.stdout.write(migrationScript(settings.schema));
    return 0;
  }
  const client = new pg.Client(poolConfig({ ...settings, poolSize: 1 }));
  try {
    await client.connect();
    const { from, to } = await migrateCentral(client, settings.schema);
    io.stdout.write(from === to ? `central schema ${settings.schema} is at version ${to}\n` : `central schema ${settings.schema}: version ${from} → ${to}\n`);
    return 0;
  } catch (err) {
    // Never echo the connection string: it may carry credentials someone put there anyway.
    io.stderr.write(`labgate pg-migrate: ${(err as { code?: string }).code ?? ''} ${(err as Error).message}\n`);
    return 1;
  } finally {
    await client.end().catch(() => {});
  }
};
