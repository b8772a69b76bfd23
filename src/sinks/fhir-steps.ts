// Each row's way through the FHIR server, as a small step machine: the entry to send next, and what its answer
// means (an outcome, or the next step). Pure. Exactly once (ARCHITECTURE.md invariants 4 and 5): the identity is
// the dedup key under labgate's identifier system, so a first delivery is a conditional create (R4 http.html
// #ccreate, If-None-Exist) or, where the server allows no such thing, a read of the record id and an update as
// create of what is absent; a correction is an update with If-Match on the version labgate last saw
// (http.html#concurrency). A failed precondition, or a create that found the Observation already there, is
// resolved by reading it: the same clinical content is our own earlier write (delivered), anything else is
// somebody else's version (a conflict for a person, never overwritten).
import type { Outcome } from '../delivery/contract.js';
import { classifyFhir, outcomeIssues } from './fhir-classify.js';
import { observationContent, type FhirObservation } from './fhir-observation.js';

/** The next request for one row. */
export type Step =
  | { kind: 'create'; ifNoneExist: string }
  | { kind: 'put'; id: string; ifMatch?: string }
  | { kind: 'read'; id: string; absent: 'create' | 'retry' | 'conflict' }
  | { kind: 'search'; query: string };

/** One row on its way: the Observation to write, its clinical content, its record id. */
export interface Pending {
  index: number;
  observation: FhirObservation;
  content: string;
  recordId: string;
  step: Step;
}

/** One batch-response entry (R4 Bundle.entry with response). */
export interface EntryAnswer {
  resource?: unknown;
  response?: { status?: string; location?: string; etag?: string; outcome?: unknown };
}

/** The version labgate keeps in the outbox row's etag: `Observation/{id}/_history/{vid}`. */
export type Version = { id: string; vid: string };

/** `Observation/{id}/_history/{vid}` as stored, or null. */
export function parseVersion(etag: string | null): Version | null {
  const m = etag === null ? null : /^Observation\/([A-Za-z0-9\-.]{1,64})\/_history\/(.+)$/.exec(etag);
  return m ? { id: m[1]!, vid: m[2]! } : null;
}

/** The stored form of a version. */
export function formatVersion(v: Version): string {
  return `Observation/${v.id}/_history/${v.vid}`;
}

/** The first step of a row: a correction of a known version, else a create by the server's way of creating. */
export function firstStep(etag: string | null, recordId: string, mode: 'conditional-create' | 'update-as-create', identifier: string): Step {
  const known = parseVersion(etag);
  if (known) return { kind: 'put', id: known.id, ifMatch: `W/"${known.vid}"` };
  if (mode === 'conditional-create') return { kind: 'create', ifNoneExist: `identifier=${identifier}` };
  return { kind: 'read', id: recordId, absent: 'create' };
}

/** The batch entry for a row's step. */
export function entryOf(p: Pending): object {
  const s = p.step;
  switch (s.kind) {
    case 'create':
      return { resource: p.observation, request: { method: 'POST', url: 'Observation', ifNoneExist: s.ifNoneExist } };
    case 'put':
      return { resource: { ...p.observation, id: s.id }, request: { method: 'PUT', url: `Observation/${s.id}`, ...(s.ifMatch ? { ifMatch: s.ifMatch } : {}) } };
    case 'read':
      return { request: { method: 'GET', url: `Observation/${s.id}` } };
    case 'search':
      return { request: { method: 'GET', url: `Observation?${s.query}` } };
  }
}

/** What an entry's answer means for the row: its outcome, or the step after. */
export function afterAnswer(p: Pending, answer: EntryAnswer, now: number, retryAfter: number | undefined): Outcome | Step {
  const status = Number.parseInt(answer.response?.status ?? '', 10);
  const s = p.step;
  const ok = status >= 200 && status < 300;
  if (s.kind === 'create') {
    if (status === 201) return delivered(versionOf(answer));
    if (ok) return answer.resource !== undefined ? compare(p, answer.resource, versionOf(answer)) : readBack(answer, s.ifNoneExist);
    // R4 http.html#ccreate: several resources match the condition.
    if (status === 412) return { kind: 'conflict', reason: 'several Observations on the FHIR server carry this identifier' };
  } else if (s.kind === 'put') {
    if (ok) return delivered(versionOf(answer));
    if (status === 409 || status === 412) return { kind: 'read', id: s.id, absent: s.ifMatch ? 'conflict' : 'retry' };
    if (s.ifMatch && (status === 404 || status === 410)) return gone();
  } else if (s.kind === 'read') {
    if (status === 200) return compare(p, answer.resource, versionOf(answer));
    if (status === 404 || status === 410) {
      if (s.absent === 'create') return { kind: 'put', id: s.id };
      return s.absent === 'conflict' ? gone() : { kind: 'retry', reason: 'the Observation vanished after the server reported it', scope: 'record' };
    }
  } else if (status === 200) {
    return searched(p, answer.resource);
  }
  return unexpected(answer, status, now, retryAfter);
}

function gone(): Outcome {
  return { kind: 'conflict', reason: 'the Observation labgate wrote is gone from the FHIR server (deleted there)' };
}

function readBack(answer: EntryAnswer, ifNoneExist: string): Step {
  const found = versionOf(answer);
  return found ? { kind: 'read', id: found.id, absent: 'retry' } : { kind: 'search', query: ifNoneExist };
}

function searched(p: Pending, bundle: unknown): Outcome | Step {
  const entries = ((bundle as { entry?: { resource?: unknown }[] } | null)?.entry ?? []).filter(
    (e) => (e.resource as { resourceType?: unknown } | undefined)?.resourceType === 'Observation',
  );
  if (entries.length === 0) return { kind: 'retry', reason: 'the Observation the server reported is not found by its identifier', scope: 'record' };
  if (entries.length > 1) return { kind: 'conflict', reason: 'several Observations on the FHIR server carry this identifier' };
  const theirs = entries[0]!.resource as { id?: string; meta?: { versionId?: string } };
  return compare(p, theirs, theirs.id && theirs.meta?.versionId ? { id: theirs.id, vid: theirs.meta.versionId } : null);
}

function compare(p: Pending, theirs: unknown, version: Version | null): Outcome {
  const etag = version ? formatVersion(version) : undefined;
  if (observationContent(theirs) === p.content)
    return { kind: 'delivered', ...(etag ? { etag } : {}), detail: 'already on the FHIR server with the same clinical content' };
  return {
    kind: 'conflict',
    reason: 'the FHIR server holds different clinical content for this result',
    theirs: JSON.stringify(theirs ?? null),
    ...(etag ? { etag } : {}),
  };
}

function delivered(version: Version | null): Outcome {
  return version ? { kind: 'delivered', etag: formatVersion(version) } : { kind: 'delivered' };
}

/** Any answer the step machine does not expect, by the classification table. */
export function unexpected(answer: EntryAnswer, status: number, now: number, retryAfter: number | undefined): Outcome {
  const { codes, text } = outcomeIssues(answer.response?.outcome ?? answer.resource);
  const verdict = classifyFhir({ kind: 'answer', status: Number.isFinite(status) ? status : 0, issues: codes });
  const reason = `${verdict.why}: ${Number.isFinite(status) ? status : 'no status'}${text ? ` ${text}` : ''}`;
  if (verdict.action === 'dead') return { kind: 'dead', reason };
  const notBefore = verdict.retryAfter && retryAfter !== undefined && retryAfter > now ? retryAfter : undefined;
  return { kind: 'retry', reason, scope: verdict.scope, ...(notBefore !== undefined ? { notBefore } : {}) };
}

/** The version an answer names: Location `.../Observation/{id}/_history/{vid}`, or its id with the ETag's version. */
export function versionOf(answer: EntryAnswer): Version | null {
  const location = answer.response?.location ?? '';
  const m = /(?:^|\/)Observation\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/([^/?#]+))?/.exec(location);
  const resource = answer.resource as { resourceType?: unknown; id?: unknown; meta?: { versionId?: unknown } } | undefined;
  const id = m?.[1] ?? (resource?.resourceType === 'Observation' && typeof resource.id === 'string' ? resource.id : undefined);
  const etag = answer.response?.etag
    ?.trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  const vid = m?.[2] ?? (etag || (typeof resource?.meta?.versionId === 'string' ? resource.meta.versionId : undefined));
  return id && vid ? { id, vid } : null;
}
