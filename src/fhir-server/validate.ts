// R4 validation of what the test server is asked to store: Medplum's validator (structure, cardinality, types,
// formats, FHIRPath invariants such as obs-3) plus the required bindings it does not check (an Observation's
// status, a Quantity's comparator) and the codes of the HL7 code systems labgate writes. Any issue fails, warnings
// included: a conflicting choice of value[x] is only a warning to Medplum but an error in R4.
import { validateResource } from '@medplum/core';
import type { OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';
import { codesOf, loadR4 } from './r4.js';

/** Code systems whose codes are checked wherever a Coding names them. */
const CHECKED_SYSTEMS = [
  'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation',
  'http://terminology.hl7.org/CodeSystem/observation-category',
] as const;

/** Every problem with `resource` as an R4 resource; empty when it is valid. */
export function validateR4(resource: unknown): OperationOutcomeIssue[] {
  loadR4();
  if (typeof resource !== 'object' || resource === null || typeof (resource as Resource).resourceType !== 'string') {
    return [issue('structure', 'not a FHIR resource', '')];
  }
  let issues: OperationOutcomeIssue[];
  try {
    issues = validateResource(resource as Resource);
  } catch (err) {
    const outcome = (err as { outcome?: { issue?: OperationOutcomeIssue[] } }).outcome;
    issues = outcome?.issue ?? [issue('structure', (err as Error).message, '')];
  }
  return [...issues, ...bindingIssues(resource as Resource)];
}

function bindingIssues(resource: Resource): OperationOutcomeIssue[] {
  const out: OperationOutcomeIssue[] = [];
  if (resource.resourceType === 'Observation') {
    // R4 Observation.status and Quantity.comparator have required bindings to these code systems.
    requireCode(out, 'http://hl7.org/fhir/observation-status', resource.status, 'Observation.status');
    const comparators = [resource.valueQuantity, ...(resource.referenceRange ?? []).flatMap((r) => [r.low, r.high])];
    for (const q of comparators) {
      if (q && 'comparator' in q && q.comparator !== undefined)
        requireCode(out, 'http://hl7.org/fhir/quantity-comparator', q.comparator, 'Quantity.comparator');
    }
  }
  for (const { system, code, path } of codings(resource, '')) {
    if ((CHECKED_SYSTEMS as readonly string[]).includes(system)) requireCode(out, system, code, path);
  }
  return out;
}

function requireCode(out: OperationOutcomeIssue[], system: string, code: unknown, path: string): void {
  const codes = codesOf(system);
  if (!codes) throw new Error(`code system ${system} is missing from the R4 definitions`);
  if (typeof code !== 'string' || !codes.has(code)) out.push(issue('code-invalid', `'${String(code)}' is not a code of ${system}`, path));
}

/** Every Coding (an object with string system and code) anywhere in `value`. */
function* codings(value: unknown, path: string): Generator<{ system: string; code: string; path: string }> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield* codings(value[i], `${path}[${i}]`);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const v = value as Record<string, unknown>;
  if (typeof v.system === 'string' && typeof v.code === 'string') yield { system: v.system, code: v.code, path };
  for (const [key, child] of Object.entries(v)) yield* codings(child, path ? `${path}.${key}` : key);
}

function issue(code: OperationOutcomeIssue['code'], text: string, path: string): OperationOutcomeIssue {
  return { severity: 'error', code, details: { text }, ...(path ? { expression: [path] } : {}) };
}
