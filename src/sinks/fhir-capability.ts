// How a first delivery creates an Observation, from the server's CapabilityStatement (R4 capabilitystatement.html:
// rest.resource.conditionalCreate, updateCreate) unless the configuration says. Pure.

/** The two ways labgate creates exactly once; `auto` reads the CapabilityStatement. */
export type CreateMode = 'conditional-create' | 'update-as-create';

/** The decision, or why there is none. */
export type ModeDecision = { ok: true; mode: CreateMode } | { ok: false; reason: string };

/** Reads the Observation entry of a CapabilityStatement. */
export function decideCreateMode(statement: unknown): ModeDecision {
  const doc = statement as { resourceType?: unknown; rest?: unknown } | null;
  if (doc?.resourceType !== 'CapabilityStatement' || !Array.isArray(doc.rest))
    return { ok: false, reason: 'the FHIR server answered /metadata without a CapabilityStatement' };
  const server = (doc.rest as { mode?: unknown; resource?: unknown }[]).find((r) => r.mode === 'server');
  const resources = Array.isArray(server?.resource) ? (server.resource as { type?: unknown; conditionalCreate?: unknown; updateCreate?: unknown }[]) : [];
  const observation = resources.find((r) => r.type === 'Observation');
  if (!observation) return { ok: false, reason: "the FHIR server's CapabilityStatement lists no Observation resource" };
  if (observation.conditionalCreate === true) return { ok: true, mode: 'conditional-create' };
  if (observation.updateCreate === true) return { ok: true, mode: 'update-as-create' };
  return {
    ok: false,
    reason:
      'the FHIR server allows neither conditional create nor update as create of an Observation, so labgate cannot create exactly once (set sinks.fhir.createMode if its CapabilityStatement is wrong)',
  };
}
