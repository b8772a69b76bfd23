// HL7's and the printed line's decoders and runners are loaded when a configuration names them (driver-registry.ts):
// binding alone (validating a configuration) does not load them. A reload that adds a protocol is in
// reload-new-protocol.test.ts: a driver once loaded stays loaded for the rest of a test file.
import { describe, expect, it } from 'vitest';
import { bindInstruments, loadDrivers } from '../../src/driver-registry.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { configOf, hl7Instrument } from './configs.js';

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
