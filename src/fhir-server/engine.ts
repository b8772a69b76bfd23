// The FHIR interactions the test server serves, over Medplum's router and an indexed memory repository, one at a
// time (a real server's serializable transactions: two conditional creates of one identifier never both create).
// Added here because the memory repository does not do them: every write is validated against R4 (validate.ts);
// an update to an id that does not exist is a create answered 201 (FHIR R4 http.html#update), and only where the
// capability statement allows it; an update that changes nothing keeps the version (as HAPI and Medplum's server
// do); every answer carries Location with the version, ETag and Last-Modified (R4 http.html#transaction-response).
import { getStatus, normalizeOperationOutcome, stringify } from '@medplum/core';
import { FhirRouter, makeSimpleRequest, type FhirRequest } from '@medplum/fhir-router';
import type { OperationOutcome, OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';
import { IndexedRepository } from './repository.js';
import { validateR4 } from './validate.js';

/** One interaction, as an HTTP request or a batch entry carries it; `url` is relative to the base (`Observation?x=y`). */
export interface Interaction {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  ifNoneExist?: string;
  ifMatch?: string;
  resource?: unknown;
}

/** Its answer. */
export interface Answer {
  status: number;
  resource?: Resource;
  outcome?: OperationOutcome;
  location?: string;
  etag?: string;
  lastModified?: string;
}

/** What the engine has done, for assertions. */
export interface EngineStats {
  created: number;
  updated: number;
  /** Conditional creates that found the resource, and updates that changed nothing. */
  unchanged: number;
  invalid: number;
}

/** What the server allows (and its CapabilityStatement says). */
export interface EngineOptions {
  updateCreate: boolean;
  conditionalCreate: boolean;
}

/** The FHIR engine behind the test server. */
export class FhirEngine {
  readonly repo = new IndexedRepository();
  private readonly router = new FhirRouter();
  private tail: Promise<unknown> = Promise.resolve();
  private readonly counts: EngineStats = { created: 0, updated: 0, unchanged: 0, invalid: 0 };

  constructor(private readonly options: EngineOptions) {}

  /** Performs one interaction after every earlier one has finished. */
  perform(interaction: Interaction): Promise<Answer> {
    const run = this.tail.then(() => this.performNow(interaction));
    this.tail = run.catch(() => undefined);
    return run;
  }

  stats(): EngineStats {
    return { ...this.counts };
  }

  private async performNow(i: Interaction): Promise<Answer> {
    try {
      if (i.method === 'POST' || i.method === 'PUT') {
        const issues = validateR4(i.resource);
        if (issues.length > 0) {
          this.counts.invalid++;
          return { status: 400, outcome: { resourceType: 'OperationOutcome', issue: issues } };
        }
      }
      if (i.method === 'PUT') return await this.update(i);
      if (i.method === 'POST' && i.ifNoneExist !== undefined && !this.options.conditionalCreate) {
        return fail(400, 'not-supported', 'conditional create is not supported by this server');
      }
      return await this.route(i);
    } catch (err) {
      const outcome = normalizeOperationOutcome(err);
      return { status: getStatus(outcome), outcome };
    }
  }

  private async update(i: Interaction): Promise<Answer> {
    const [type, id, ...rest] = i.url.split('?')[0]!.split('/');
    if (!type || !id || rest.length > 0) return fail(400, 'not-supported', 'conditional update is not supported by this server');
    const existing = await this.repo.readResource(type, id).catch(() => undefined);
    if (!existing) {
      if (i.ifMatch !== undefined) return fail(412, 'conflict', 'If-Match names a version of a resource that does not exist');
      if (!this.options.updateCreate) return fail(405, 'not-supported', 'update as create is not allowed by this server');
    } else {
      if (i.ifMatch !== undefined && versionOf(i.ifMatch) !== existing.meta?.versionId) return fail(412, 'conflict', 'version mismatch (If-Match)');
      if (sameContent(existing, i.resource as Resource)) {
        this.counts.unchanged++;
        return answer(200, existing);
      }
    }
    const routed = await this.route({ ...i, ifMatch: undefined });
    if (routed.status !== 200) return routed;
    this.counts[existing ? 'updated' : 'created']++;
    return existing ? routed : { ...routed, status: 201 };
  }

  private async route(i: Interaction): Promise<Answer> {
    const req: FhirRequest = {
      ...makeSimpleRequest(i.method, i.url, i.resource),
      headers: i.ifNoneExist !== undefined ? { 'if-none-exist': i.ifNoneExist } : {},
    };
    const [outcome, resource] = await this.router.handleRequest(req, this.repo);
    const status = getStatus(outcome);
    if (status >= 400 || !resource) return { status, outcome };
    if (i.method === 'POST') this.counts[status === 201 ? 'created' : 'unchanged']++;
    return answer(status, resource);
  }
}

function answer(status: number, resource: Resource): Answer {
  const versionId = resource.meta?.versionId;
  const base = `${resource.resourceType}/${resource.id}`;
  return {
    status,
    resource,
    ...(resource.id ? { location: versionId ? `${base}/_history/${versionId}` : base } : {}),
    ...(versionId ? { etag: `W/"${versionId}"` } : {}),
    ...(resource.meta?.lastUpdated ? { lastModified: new Date(resource.meta.lastUpdated).toUTCString() } : {}),
  };
}

/** An OperationOutcome answer with one error issue. */
export function fail(status: number, code: OperationOutcomeIssue['code'], text: string): Answer {
  return { status, outcome: { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code, details: { text } }] } };
}

/** `W/"3"` or `"3"` → `3` (RFC 9110 8.8.3 entity tag, FHIR's weak ETag of the version id). */
export function versionOf(etag: string): string {
  return etag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}

function sameContent(a: Resource, b: Resource): boolean {
  const strip = (r: Resource): string => stringify({ ...r, meta: { ...r.meta, versionId: undefined, lastUpdated: undefined } });
  return strip(a) === strip(b);
}
