// Whether an analyzer code, as last seen, needs a mapping under an instrument's mapping: the one rule the status page
// lists codes by and the store keeps them by. It is lookupAnalyte's verdict, read from an index so that judging an
// instrument's few hundred codes against a long mapping costs one lookup each.
import { lookupAnalyte, type AnalyteMapping } from './mapping.js';

/** Why a code's results are rejected under a mapping now, or null when they are stored. */
export type MappingNeed = 'not mapped' | 'unit differs' | null;

/** A code judged: its mapping entry (undefined: none) and what it needs. */
export interface CodeJudgement {
  entry: AnalyteMapping | undefined;
  need: MappingNeed;
}

/** Judges codes against `mapping`; `lastValue` null is a code seen only before units were kept, never a mismatch. */
export function mappingNeeds(mapping: readonly AnalyteMapping[]): (code: string, lastUnit: string | null, lastValue: string | null) => CodeJudgement {
  // lookupAnalyte takes the first entry of a code; so does the index.
  const first = new Map<string, AnalyteMapping>();
  for (const m of mapping) if (!first.has(m.code)) first.set(m.code, m);
  return (code, lastUnit, lastValue) => {
    const entry = first.get(code.trim());
    if (!entry) return { entry, need: 'not mapped' };
    const differs = lookupAnalyte([entry], code, lastUnit).kind === 'rejected' && lastValue !== null;
    return { entry, need: differs ? 'unit differs' : null };
  };
}
