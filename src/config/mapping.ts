// Per-instrument test code mapping: the analyzer's own code to a LOINC and the unit the mapping expects.
import { z } from 'zod';

/** One analyzer test code and what it means. `unit: null` means the result carries no unit. */
export const analyteMappingSchema = z.strictObject({
  /** The analyzer's code as the driver extracts it (for ASTM, the configured R.3 components joined by `codeJoin`, `^` by default). */
  code: z.string().trim().min(1),
  loinc: z.string().trim().min(1),
  /** Expected unit; a result reporting another unit is rejected. Omit to accept whatever the analyzer sends. */
  unit: z.string().nullable().optional(),
  /** True: every result of this code is a control (QC) result, whatever the message says (a control's own test code). */
  qc: z.boolean().optional(),
});
export type AnalyteMapping = z.infer<typeof analyteMappingSchema>;

/** What a pure decoder needs to know about an instrument; the runtime builds it from the configuration. */
export interface InstrumentProfile {
  id: string;
  gatewayId: string;
  /** IANA zone or fixed offset of the analyzer's clock. */
  timezone: string;
  mapping: readonly AnalyteMapping[];
}

export type MappingLookup = { kind: 'mapped'; loinc: string; unit: string | null | undefined; qc: boolean } | { kind: 'rejected'; reason: string };

/** Finds the mapping for a code and checks the unit; the reason names the code, never patient data. */
export function lookupAnalyte(mapping: readonly AnalyteMapping[], code: string, unit: string | null): MappingLookup {
  const entry = mapping.find((m) => m.code === code.trim());
  if (!entry) return { kind: 'rejected', reason: `unmapped test code '${code.trim()}'` };
  if (entry.unit !== undefined && (entry.unit ?? '') !== (unit ?? '').trim()) {
    return {
      kind: 'rejected',
      reason: `unit '${(unit ?? '').trim()}' for test code '${entry.code}' differs from the mapping's '${entry.unit ?? ''}'`,
    };
  }
  return { kind: 'mapped', loinc: entry.loinc.trim().toUpperCase(), unit: entry.unit ?? (unit?.trim() || null), qc: entry.qc === true };
}
