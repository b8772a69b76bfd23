// Two-way instruments (options.orders.query or .download, ASTM or HL7) need what their answers are made from and sent
// with: the LIMS (sinks.lims, enabled), and for ASTM the LIS01-A2 link layer (a bare-records analyzer has no way to be
// sent to). HL7 answers go out framed as the instrument's messages come in (MLLP, or bare segments).
import type { ConfigProblem } from './problem.js';
import type { Config } from './schema.js';

type Raw = Record<string, unknown>;

/** The drivers that answer host queries and download orders. */
const twoWayDrivers: readonly string[] = ['astm', 'hl7'];

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The problems of every two-way instrument in a raw (unvalidated) configuration document. */
export function twoWayChecks(input: Raw): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const sinks = isRecord(input['sinks']) ? input['sinks'] : {};
  const lims = sinks['lims'];
  const limsOn = isRecord(lims) && lims['enabled'] !== false;
  const list = Array.isArray(input['instruments']) ? input['instruments'] : [];
  list.forEach((instrument: unknown, i) => {
    if (!isRecord(instrument) || !twoWayDrivers.includes(String(instrument['driver'])) || !isRecord(instrument['options'])) return;
    const options = instrument['options'];
    const orders = options['orders'];
    if (!isRecord(orders) || (orders['query'] !== true && orders['download'] !== true)) return;
    const path = `instruments[${i}].options.orders`;
    if (!limsOn) problems.push({ path, message: 'query and download modes read the orders from the LIMS: configure sinks.lims (enabled)' });
    if (instrument['driver'] === 'astm' && options['framing'] === 'none')
      problems.push({ path, message: 'query and download modes send to the analyzer over the LIS01-A2 link layer: they need framing: link' });
  });
  return problems;
}

/** The enabled ASTM and HL7 instruments in query or download mode. */
export function twoWayInstruments(config: Config): Set<string> {
  return new Set(config.instruments.filter((i) => i.enabled && twoWayDrivers.includes(i.driver) && isTwoWay(i.options)).map((i) => i.id));
}

function isTwoWay(options: Record<string, unknown>): boolean {
  const orders = options['orders'] as { query?: unknown; download?: unknown } | undefined;
  return orders?.query === true || orders?.download === true;
}
