// A FHIR `batch` Bundle, entry by entry (R4 http.html#transaction): each entry succeeds or fails on its own and its
// response says so; the response entries come in the order of the request entries. Transactions are refused:
// labgate never sends one (one bad result must not fail the others).
import type { Bundle, BundleEntry, BundleEntryResponse, Resource } from '@medplum/fhirtypes';
import { fail, type Answer, type FhirEngine, type Interaction } from './engine.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/** Processes a batch; `representation` (Prefer: return=representation) adds each entry's resource. */
export async function processBatch(
  engine: FhirEngine,
  body: unknown,
  representation: boolean,
  before?: (entry: BundleEntry) => Answer | undefined,
): Promise<Answer> {
  const bundle = body as Bundle | null;
  if (bundle?.resourceType !== 'Bundle') return fail(400, 'invalid', 'expected a Bundle');
  if (bundle.type !== 'batch') return fail(400, 'not-supported', `Bundle.type ${String(bundle.type)}: this server takes batch bundles only`);
  const entries: BundleEntry[] = [];
  for (const entry of bundle.entry ?? []) {
    const forced = before?.(entry);
    const parsed = interactionOf(entry);
    const answer = forced ?? ('status' in parsed ? parsed : await engine.perform(parsed));
    // A read answers with the resource itself; a write only when the client asked for it (Prefer).
    const withResource = answer.resource && (representation || ('method' in parsed && parsed.method === 'GET'));
    entries.push({ ...(withResource ? { resource: answer.resource } : {}), response: responseOf(answer) });
  }
  const response: Bundle = { resourceType: 'Bundle', type: 'batch-response', entry: entries };
  return { status: 200, resource: response as Resource };
}

function interactionOf(entry: BundleEntry): Interaction | Answer {
  const r = entry.request;
  const method = r?.method;
  if (!r || !method || !METHODS.has(method) || !r.url) return fail(400, 'invalid', 'entry.request needs a method (GET, POST, PUT, DELETE) and a url');
  return {
    method: method as Interaction['method'],
    url: r.url.replace(/^\//, ''),
    ...(r.ifNoneExist !== undefined ? { ifNoneExist: r.ifNoneExist } : {}),
    ...(r.ifMatch !== undefined ? { ifMatch: r.ifMatch } : {}),
    ...(entry.resource !== undefined ? { resource: entry.resource } : {}),
  };
}

function responseOf(a: Answer): BundleEntryResponse {
  return {
    status: String(a.status),
    ...(a.location ? { location: a.location } : {}),
    ...(a.etag ? { etag: a.etag } : {}),
    ...(a.lastModified ? { lastModified: new Date(a.lastModified).toISOString() } : {}),
    ...(a.outcome && a.status >= 400 ? { outcome: a.outcome } : {}),
  };
}
