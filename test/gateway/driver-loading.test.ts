// HL7's and the printed line's decoders and runners are loaded when a configuration names them (driver-registry.ts):
// binding alone (validating a configuration) does not load them. A reload that adds a protocol is in
// reload-new-protocol.test.ts: a driver once loaded stays loaded for the rest of a test file.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { bindInstruments, loadDrivers } from '../../src/driver-registry.js';
import { mindrayBs } from '../hl7/fixtures.js';

const hl7Instrument = (port: number) => ({
  id: 'bs240',
  driver: 'hl7',
  timezone: 'Europe/Vienna',
  transport: { kind: 'tcp-server', host: '127.0.0.1', port },
  mapping: mindrayBs.profile.mapping,
  options: mindrayBs.options,
});

function configOf(dir: string, instruments: object[]) {
  const parsed = validateConfig({ gateway: { id: 'gw1', dataDir: join(dir, 'data'), http: { host: '127.0.0.1', port: 0 }, diskFloorMb: 0 }, instruments });
  if (parsed.kind !== 'ok') throw new Error(JSON.stringify(parsed.problems));
  return parsed.config;
}

describe('drivers loaded on demand', () => {
  it('binding validates an HL7 instrument without loading its driver; decoding needs loadDrivers first', async () => {
    const config = configOf('/nonexistent', [hl7Instrument(1)]);
    const bound = bindInstruments(config);
    if (bound.kind !== 'ok') throw new Error(JSON.stringify(bound.problems));
    const bs240 = bound.instruments.get('bs240')!;
    const raw = Buffer.from(`\x0b${mindrayBs.payload}\x1c\r`, 'latin1'); // one MLLP block, as the wire carries it
    expect(() => bs240.driver.decodeCapture(raw, bs240.profile)).toThrow(/before loadDrivers/);
    await loadDrivers(config.instruments);
    expect(bs240.driver.decodeCapture(raw, bs240.profile).flatMap((m) => m.results).length).toBeGreaterThan(0);
  });
});
