// The shipped layouts (config/line/*.yaml) loaded as the runtime would, and printouts written in
// each layout's documented form (not copied captures).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { lineOptionsSchema, type LineOptions } from '../../drivers/line/options.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { configSchema } from '../../src/config/schema.js';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** An instrument of a shipped configuration: its profile and its validated line options. */
export function loadLayout(file: string): { profile: InstrumentProfile; options: LineOptions } {
  const config = configSchema.parse(parse(readFileSync(join(root, 'config/line', file), 'utf8')));
  const instrument = config.instruments[0]!;
  const profile: InstrumentProfile = { id: instrument.id, gatewayId: config.gateway.id, timezone: instrument.timezone, mapping: instrument.mapping };
  return { profile, options: lineOptionsSchema.parse(instrument.options) };
}

/** A SPOTCHEM EL report: STX, one space-padded line, ETX, LF. */
export const spotchemReport = '<STX>24/11/05 09:41 ID# 24K0231    [Serum] Na       141  mmol/L K        4.2  mmol/L Cl       103  mmol/L          <ETX><LF>';

/** A CLINITEK Status+ report, CR LF line ends, no end marker. */
export const clinitekReport = [
  'Date: 10/29/24   Time: 01:08PM',
  'Operator: JS',
  'Patient ID: U24-0311',
  'Color: Yellow  Clarity: Clear',
  'GLU          Negative',
  'BIL          Negative',
  'KET          Trace',
  'SG           1.025',
  'BLO          Negative',
  'pH           6.0',
  '*PRO          100 mg/dL',
  'URO          0.2 E.U./dL',
  'NIT          Negative',
  '*LEU          Small',
]
  .map((l) => `${l}<CR><LF>`)
  .join('');
