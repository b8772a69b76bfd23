// Configurations the gateway's tests start from: a Mindray BS-240 speaking HL7 on a TCP port, and a gateway of given
// instruments with its data under `dir`.
import { join } from 'node:path';
import { validateConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { mindrayBs } from '../hl7/fixtures.js';

/** The BS-240 of the HL7 fixtures, listening on `port` of 127.0.0.1. */
export const hl7Instrument = (port: number) => ({
  id: 'bs240',
  driver: 'hl7',
  timezone: 'Europe/Vienna',
  transport: { kind: 'tcp-server', host: '127.0.0.1', port },
  mapping: mindrayBs.profile.mapping,
  options: mindrayBs.options,
});

/** A valid configuration of `instruments` (throws with the problems otherwise), no disk floor, HTTP on a free port. */
export function configOf(dir: string, instruments: object[]): Config {
  const parsed = validateConfig({ gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 }, instruments });
  if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}
