// `labgate fhir-jwks --config FILE`: prints the public JWKS of the FHIR sink's SMART Backend Services key, for the
// operator to register with the hospital's authorization server (or publish at a URL it fetches). Reads the private
// key file named in the configuration; prints only its public half.
import { readFileSync } from 'node:fs';
import type { Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { LabgateError } from '../errors.js';
import { publicJwks, signingKey } from '../sinks/client-assertion.js';

const help = `Usage: labgate fhir-jwks [--config FILE]

Prints the public JWKS (JSON) of sinks.fhir.auth.privateKeyFile with its keyId and algorithm, to register with
the FHIR server's authorization server for SMART Backend Services. Needs sinks.fhir.auth.kind: smart-backend.
  --config FILE   default /etc/labgate/labgate.yaml`;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options: configOption }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const config = loadConfig(values.config ?? '/etc/labgate/labgate.yaml');
  const auth = config.sinks.fhir?.auth;
  if (auth?.kind !== 'smart-backend') throw new LabgateError('CONFIG_INVALID', 'sinks.fhir.auth.kind is not smart-backend: there is no key to publish');
  let pem: string;
  try {
    pem = readFileSync(auth.privateKeyFile, 'utf8');
  } catch (err) {
    throw new LabgateError('CONFIG_UNREADABLE', `cannot read ${auth.privateKeyFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const key = signingKey(pem, auth.algorithm);
  if (!key.ok) throw new LabgateError('CONFIG_INVALID', `${auth.privateKeyFile}: ${key.reason}`);
  io.stdout.write(JSON.stringify(publicJwks(key.key, auth.algorithm, auth.keyId), null, 2) + '\n');
  return 0;
};
