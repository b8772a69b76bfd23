// Builds instrument profiles and options for the ASTM tests.
import type { AnalyteMapping, InstrumentProfile } from '../../src/config/mapping.js';
import type { AstmOptions, AstmOptionsInput } from '../../drivers/astm/options.js';
import { parseAstmOptions } from '../../drivers/astm/options.js';

/** A profile for instrument `id` with the given mapping. */
export function profile(mapping: AnalyteMapping[], over: Partial<InstrumentProfile> = {}): InstrumentProfile {
  return { id: 'chem-1', gatewayId: 'gw-test', timezone: 'UTC', mapping, ...over };
}

/** Validated options. */
export function options(input: AstmOptionsInput = {}): AstmOptions {
  return parseAstmOptions(input);
}
