// Every command's options: a malformed command line is a usage error (exit 2) that shows the command's help.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { LabgateError } from '../errors.js';

/** Options shared by the commands that read the configuration. */
export const configOption = { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } as const;

/** parseArgs, with its errors turned into a usage error carrying `help`. */
export function commandArgs<T extends ParseArgsConfig>(config: T, help: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw new LabgateError('USAGE', `${(err as Error).message}\n\n${help}`);
  }
}
