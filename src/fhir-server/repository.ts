// Medplum's memory repository with an index on Observation.identifier. The memory repository answers a search by
// scanning every resource, so each conditional create (If-None-Exist: identifier=...) would cost the size of the
// store; real servers index tokens. Other searches go to Medplum unchanged.
import type { SearchRequest, WithId } from '@medplum/core';
import { MemoryRepository } from '@medplum/fhir-router';
import type { Bundle, Identifier, Resource } from '@medplum/fhirtypes';

/** A memory repository that finds resources by `identifier=system|value` without a scan. */
export class IndexedRepository extends MemoryRepository {
  /** `Type system|value` → ids of resources carrying that identifier. */
  private readonly byIdentifier = new Map<string, Set<string>>();
  /** id → the index keys it is filed under, so an edited identifier is re-filed. */
  private readonly filed = new Map<string, string[]>();

  override async createResource<T extends Resource>(resource: T): Promise<WithId<T>> {
    const stored = await super.createResource(resource);
    this.refile(stored.resourceType, stored.id, (stored as { identifier?: Identifier[] }).identifier ?? []);
    return stored;
  }

  override async deleteResource(resourceType: string, id: string): Promise<void> {
    await super.deleteResource(resourceType, id);
    this.refile(resourceType, id, []);
  }

  override async search<T extends Resource>(request: SearchRequest<T>): Promise<Bundle<WithId<T>>> {
    const f = request.filters;
    const only = f?.length === 1 ? f[0]! : undefined;
    if (!only || only.code !== 'identifier' || only.operator !== 'eq' || !only.value.includes('|') || request.sortRules?.length) {
      return super.search(request);
    }
    const ids = [...(this.byIdentifier.get(`${request.resourceType} ${only.value}`) ?? [])];
    const found = await Promise.all(ids.map((id) => this.readResource<T>(request.resourceType, id)));
    const page = found.slice(request.offset ?? 0, (request.offset ?? 0) + (request.count ?? found.length));
    return {
      resourceType: 'Bundle',
      type: 'searchset',
      total: found.length,
      ...(page.length ? { entry: page.map((resource) => ({ resource: resource as WithId<T> })) } : {}),
    };
  }

  override clear(): void {
    super.clear();
    this.byIdentifier.clear();
    this.filed.clear();
  }

  private refile(resourceType: string, id: string, identifiers: readonly Identifier[]): void {
    const ref = `${resourceType}/${id}`;
    for (const key of this.filed.get(ref) ?? []) this.byIdentifier.get(key)?.delete(id);
    const keys = identifiers.filter((i) => i.system && i.value).map((i) => `${resourceType} ${i.system}|${i.value}`);
    for (const key of keys) {
      let ids = this.byIdentifier.get(key);
      if (!ids) this.byIdentifier.set(key, (ids = new Set()));
      ids.add(id);
    }
    this.filed.set(ref, keys);
  }
}
