// `labgate decode`: placeholder until the ASTM driver lands (issue 3).
import type { Command } from '../cli.js';
import { LabgateError } from '../errors.js';

export const command: Command = async () => {
  throw new LabgateError('USAGE', 'decode is not available yet');
};
