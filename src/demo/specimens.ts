// Synthetic chemistry results for the demo: a basic metabolic panel per specimen, plausible values and units,
// accession numbers that are obviously not real (DEMO-0001, ...), and no patient demographics at all (the P record
// is empty). Each specimen becomes one LIS2-A2 message (H, P, O, R..., L) as an analyzer would send it.
import type { AnalyteMapping } from '../config/mapping.js';
import { dedupKey } from '../result.js';
import { offsetMs, wallTimeToInstant } from '../zoned-time.js';

/** One analyte of the panel: the analyzer's code and what a person calls it. */
interface PanelAnalyte {
  code: string;
  name: string;
  unit: string;
  low: number;
  high: number;
  decimals: number;
}

const fullPanel: readonly PanelAnalyte[] = [
  { code: 'GLU', name: 'glucose', unit: 'mg/dL', low: 70, high: 99, decimals: 0 },
  { code: 'NA', name: 'sodium', unit: 'mmol/L', low: 135, high: 145, decimals: 0 },
  { code: 'K', name: 'potassium', unit: 'mmol/L', low: 3.5, high: 5.1, decimals: 1 },
  { code: 'CREA', name: 'creatinine', unit: 'mg/dL', low: 0.6, high: 1.2, decimals: 2 },
];

/** One result as sent, with the dedup key the central system will know it by. */
export interface SentResult {
  accession: string;
  code: string;
  text: string;
  key: string;
}

/** One specimen's message and its results. */
export interface Specimen {
  accession: string;
  message: string;
  results: SentResult[];
  /** `glucose 98 mg/dL, sodium 140 mmol/L, ...` */
  description: string;
}

/** Builds specimens numbered from `first`, resulted at `at` (epoch ms) on the analyzer's clock in `zone`. */
export function makeSpecimens(options: {
  first: number;
  count: number;
  at: number;
  instrumentId: string;
  zone: string;
  mapping: readonly AnalyteMapping[];
  random: () => number;
  /** Only these of the panel's codes (the tests a host query ordered); default the whole panel. */
  codes?: readonly string[];
  /** The accessions to use, one per specimen, instead of DEMO-0001, ... */
  accessions?: readonly string[];
}): Specimen[] {
  const out: Specimen[] = [];
  const panel = options.codes ? fullPanel.filter((a) => options.codes!.includes(a.code)) : fullPanel;
  for (let n = options.first; n < options.first + options.count; n++) {
    const accession = options.accessions?.[n - options.first] ?? `DEMO-${String(n).padStart(4, '0')}`;
    const wall = analyzerTime(options.at + (n - options.first) * 1000, options.zone);
    const instant = wallTimeToInstant(parseWall(wall), options.zone);
    if (instant.kind !== 'instant') throw new Error(`demo result time ${wall} is not a time in ${options.zone}`);
    const values = panel.map((a) => ({ a, value: plausible(a, options.random) }));
    const results = values.map(({ a, value }) => ({
      accession,
      code: a.code,
      text: `${a.name} ${value} ${a.unit}`,
      key: dedupKey({ accession, analyteLoinc: loincOf(options.mapping, a.code), instrumentId: options.instrumentId, resultedAt: instant.epochMs }),
    }));
    const records = [
      `H|\\^&|||LabgateDemo^ChemEmulator^1.0|||||||P|LIS2-A2|${wall}`,
      'P|1',
      `O|1|${accession}||${panel.map((a) => `^^^${a.code}`).join('\\')}|R||||||N||||SERUM`,
      ...values.map(({ a, value }, i) => `R|${i + 1}|^^^${a.code}|${value}|${a.unit}|${a.low} to ${a.high}|${flag(a, value)}||F||||${wall}`),
      'L|1|N',
    ];
    out.push({ accession, message: records.join('\r') + '\r', results, description: results.map((r) => r.text).join(', ') });
  }
  return out;
}

function loincOf(mapping: readonly AnalyteMapping[], code: string): string {
  const entry = mapping.find((m) => m.code === code);
  if (!entry) throw new Error(`the demo configuration maps no LOINC for the demo analyte ${code}`);
  return entry.loinc;
}

// Mostly within the reference interval, now and then just outside it (flagged H or L), as in a real run.
function plausible(a: PanelAnalyte, random: () => number): string {
  const span = a.high - a.low;
  return (a.low - 0.15 * span + random() * 1.3 * span).toFixed(a.decimals);
}

function flag(a: PanelAnalyte, value: string): string {
  const v = Number(value);
  return v < a.low ? 'L' : v > a.high ? 'H' : 'N';
}

/** The analyzer clock's reading (YYYYMMDDHHMMSS) of an instant in its zone. */
function analyzerTime(epochMs: number, zone: string): string {
  const local = new Date(Math.floor(epochMs / 1000) * 1000 + offsetMs(epochMs, zone));
  return local.toISOString().slice(0, 19).replace(/[-T:]/g, '');
}

function parseWall(s: string): { year: number; month: number; day: number; hour: number; minute: number; second: number } {
  const n = (from: number, to: number): number => Number(s.slice(from, to));
  return { year: n(0, 4), month: n(4, 6), day: n(6, 8), hour: n(8, 10), minute: n(10, 12), second: n(12, 14) };
}
