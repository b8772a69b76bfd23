// The FHIR mapping table ("What a result becomes": `| result | Observation |`, in README.md or a page of docs/)
// is the contract a hospital's FHIR team implements against: every Observation field labgate writes is a row of it,
// no row names a field labgate does not write, and the statuses and URIs it names are the ones the code uses.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sampleResult } from '../../src/lims-server/sample-rows.js';
import { buildPayload } from '../../src/payload.js';
import { keyedResultSchema, type KeyedResultInput } from '../../src/result.js';
import { ANALYZER_STATUS_EXTENSION, observationStatus, QC_TAG, toObservation, type FhirObservation } from '../../src/sinks/fhir-observation.js';
import { SYSTEMS } from '../fhir/harness.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const HEADER = '| result | Observation |';

function markdownFiles(): string[] {
  const docs = join(repo, 'docs');
  const pages = readdirSync(docs, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
  return [join(repo, 'README.md'), ...pages.map((f) => join(docs, f))];
}

/** The rows of the one mapping table, as [result cell, Observation cell]. */
function mappingTable(): [string, string][] {
  const holders = markdownFiles().filter((f) => readFileSync(f, 'utf8').includes(HEADER));
  expect(holders, 'exactly one page holds the FHIR mapping table').toHaveLength(1);
  const text = readFileSync(holders[0]!, 'utf8');
  const lines = text.slice(text.indexOf(HEADER)).split('\n');
  const rows = lines.slice(2, lines.findIndex((l, i) => i > 0 && !l.startsWith('|')));
  return rows.map((row) => {
    const cells = row.split(' | ');
    return [cells[0]!.replace(/^\| /, ''), cells.slice(1).join(' | ').replace(/ \|$/, '')];
  });
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
/** The Observation field a row documents: the first word of its right cell (`code.coding`, `valueQuantity`). */
const fieldOf = (cell: string): string => cell.split(' ')[0]!.replace(/[`:,]/g, '');

function observe(overrides: Partial<KeyedResultInput>): FhirObservation {
  const result = keyedResultSchema.parse(sampleResult(1, overrides));
  return toObservation(buildPayload(result, { receivedAt: Date.UTC(2026, 6, 1, 8, 0, 1), rawSha256: 'a'.repeat(64) }), { ...SYSTEMS, ucumUnits: {} });
}

// One result for each branch of the mapping: a number, a censored value, text, a unit that is not UCUM, coded and
// uncoded flags, a range, a quality-control run, no status letter.
const spread: Partial<KeyedResultInput>[] = [
  {},
  { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 },
  { valueText: 'positive', value: null, unit: null },
  { unit: 'cells per field', flags: ['H', 'smudge cells'] },
  { qc: true, statusCode: null, referenceRange: 'see report' },
];

describe('the FHIR mapping table against src/sinks/fhir-observation.ts', () => {
  const rows = mappingTable();
  const documented = rows.map(([, right]) => fieldOf(right));

  it('has a row for every field labgate writes, and no row for a field it does not', () => {
    const written = new Set(spread.flatMap((o) => Object.keys(observe(o))).filter((k) => k !== 'resourceType'));
    expect(new Set(documented.map((f) => f.split('.')[0]))).toEqual(written);
    for (const path of documented) {
      const holds = spread.some((o) => path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], observe(o)) !== undefined);
      expect(holds, path).toBe(true);
    }
  });

  it('lists every result status beside the R4 status it becomes, in order', () => {
    const row = rows.find(([left]) => left.startsWith('status '));
    expect(row).toBeDefined();
    expect(backticked(row![0])).toEqual(Object.keys(observationStatus));
    expect(backticked(row![1]).slice(1)).toEqual(Object.values(observationStatus));
  });

  it('names the URIs the code writes', () => {
    const table = rows.flat().join('\n');
    for (const uri of [ANALYZER_STATUS_EXTENSION, `${QC_TAG.system}#${QC_TAG.code}`, 'http://loinc.org', 'http://unitsofmeasure.org', 'observation-category#laboratory']) {
      expect(table).toContain(uri);
    }
  });

  it('codes the flags it gives as ObservationInterpretation examples, and keeps another flag as text', () => {
    const row = rows.find(([, right]) => fieldOf(right) === 'interpretation');
    const examples = backticked(row![1]).filter((c) => c !== 'interpretation' && !c.startsWith('{'));
    expect(examples.length).toBeGreaterThan(3);
    const o = observe({ flags: [...examples, 'smudge cells'] });
    expect(o.interpretation?.slice(0, examples.length).map((i) => i.coding?.[0]?.code)).toEqual(examples);
    expect(o.interpretation?.at(-1)).toEqual({ text: 'smudge cells' });
  });
});
