// A FHIR R4 test server: a real node:http listener in front of FhirEngine (Medplum's router and memory repository,
// with the parts engine.ts adds), a token endpoint for client secrets and SMART Backend Services, and the LIMS test
// server's fault injection. Used by the tests, the FHIR bench and `labgate demo --fhir`. Not for production: the
// admin routes have no auth, and everything lives in memory.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BundleEntry, Observation, Resource } from '@medplum/fhirtypes';
import { latencyOf, rollFate, seededRandom } from '../lims-server/faults.js';
import type { LimsClient } from '../lims-server/tokens.js';
import { TestListener } from '../test-servers/listener.js';
import { processBatch } from './batch.js';
import { capabilityStatement } from './capability.js';
import { fail, FhirEngine, type Answer, type EngineStats, type Interaction } from './engine.js';
import { noFhirFaults, type FhirFaults } from './faults.js';
import { SmartTokenDesk, type SmartClient } from './smart-tokens.js';
import { loadR4 } from './r4.js';

/** How to start the server. */
export interface FhirServerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Path of the FHIR base; default `/fhir`. */
  basePath?: string;
  conditionalCreate?: boolean;
  updateCreate?: boolean;
  smartClients?: SmartClient[];
  clients?: LimsClient[];
  staticTokens?: string[];
  faults?: Partial<FhirFaults>;
  random?: () => number;
  now?: () => number;
  /** Serve /_admin/faults, /_admin/stats and /_admin/census (default true). */
  admin?: boolean;
}

/** Counters a test asserts on. */
export interface FhirServerStats extends EngineStats {
  tokensIssued: number;
  hanging: number;
  batches: number;
}

/** Observations per identifier value and versions per Observation. */
export interface Census {
  observations: number;
  /** identifier value → how many Observations carry it. */
  perIdentifier: Record<string, number>;
  /** Observation id → number of versions. */
  versions: Record<string, number>;
}

const TOKEN_PATH = '/auth/token';
const FHIR_JSON = 'application/fhir+json';

/** A running (or startable) FHIR test server. */
export class FhirTestServer {
  readonly engine: FhirEngine;
  readonly desk: SmartTokenDesk;
  private current: FhirFaults;
  private readonly hung = new Set<ServerResponse>();
  private readonly listener: TestListener;
  private readonly basePath: string;
  private readonly random: () => number;
  private readonly now: () => number;
  private batches = 0;

  constructor(private readonly options: FhirServerOptions = {}) {
    loadR4();
    this.current = { ...noFhirFaults, ...options.faults };
    this.basePath = (options.basePath ?? '/fhir').replace(/\/$/, '');
    this.random = options.random ?? seededRandom(1);
    this.now = options.now ?? Date.now;
    this.engine = new FhirEngine({ conditionalCreate: options.conditionalCreate ?? true, updateCreate: options.updateCreate ?? true });
    this.desk = new SmartTokenDesk(options.smartClients ?? [], options.clients ?? [], options.staticTokens ?? [], this.now);
    this.listener = new TestListener({
      ...(options.host ? { host: options.host } : {}),
      ...(options.port ? { port: options.port } : {}),
      latencyMs: () => latencyOf(this.current, this.random),
      down: () => this.current.outage,
      handle: (req, res, body) => this.route(req, res, body),
    });
  }

  /** The FHIR base URL, once started. */
  get url(): string {
    return this.listener.origin + this.basePath;
  }

  get tokenUrl(): string {
    return this.listener.origin + TOKEN_PATH;
  }

  /** Listens; after a stop() it comes back on the same port. */
  start(): Promise<void> {
    return this.listener.start();
  }

  async stop(): Promise<void> {
    this.releaseHung();
    await this.listener.stop();
  }

  /** Changes misbehavior at run time; `outage: true` also drops every open connection. */
  configure(patch: Partial<FhirFaults>): void {
    this.current = { ...this.current, ...patch };
    if (this.current.outage) this.listener.dropConnections();
  }

  faults(): FhirFaults {
    return this.current;
  }

  /** Somebody else changes an Observation (a technologist in the hospital system): a new version. */
  async edit(id: string, mutate: (o: Observation) => Observation): Promise<Answer> {
    const current = await this.engine.repo.readResource<Observation>('Observation', id);
    return this.engine.perform({ method: 'PUT', url: `Observation/${id}`, resource: mutate(current) });
  }

  /** Every Observation carrying `system|value`. */
  async byIdentifier(system: string, value: string): Promise<Observation[]> {
    return this.engine.repo.searchResources<Observation>({
      resourceType: 'Observation',
      filters: [{ code: 'identifier', operator: 'eq', value: `${system}|${value}` }],
    });
  }

  /** The versions of an Observation, newest first. */
  async history(id: string): Promise<Observation[]> {
    const bundle = await this.engine.repo.readHistory<Observation>('Observation', id);
    return (bundle.entry ?? []).map((e) => e.resource!);
  }

  async census(): Promise<Census> {
    const all = await this.engine.repo.searchResources<Observation>({ resourceType: 'Observation', count: Number.MAX_SAFE_INTEGER });
    const perIdentifier: Record<string, number> = {};
    const versions: Record<string, number> = {};
    for (const o of all) {
      for (const i of o.identifier ?? []) if (i.value) perIdentifier[i.value] = (perIdentifier[i.value] ?? 0) + 1;
      versions[o.id] = (await this.history(o.id)).length;
    }
    return { observations: all.length, perIdentifier, versions };
  }

  revokeTokens(): void {
    this.desk.revokeAll();
  }

  /** Ends every hanging request without an answer (nothing was applied). */
  releaseHung(): void {
    for (const res of this.hung) res.socket?.destroy();
    this.hung.clear();
  }

  stats(): FhirServerStats {
    return { ...this.engine.stats(), tokensIssued: this.desk.all().length, hanging: this.hung.size, batches: this.batches };
  }

  private async route(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (req.method === 'POST' && path === TOKEN_PATH) return this.token(req, res, body);
    if (this.options.admin !== false && path.startsWith('/_admin/')) return this.admin(req, res, path, body);
    if (path !== this.basePath && !path.startsWith(this.basePath + '/')) return void res.writeHead(404).end();
    const rel = path.slice(this.basePath.length + 1) + url.search;
    if (req.method === 'GET' && rel === 'metadata') return send(res, { status: 200, resource: this.capability() });
    if (this.authRequired() && !this.desk.check(req.headers.authorization)) return send(res, fail(401, 'login', 'a valid bearer token is required'));
    const write = req.method !== 'GET';
    if (write) {
      const fate = rollFate(this.current, this.random);
      if (fate === 'hang') return void this.hung.add(res);
      if (fate !== 'serve')
        return send(res, fail(Number(fate), fate === '429' ? 'throttled' : 'transient', `injected ${fate}`), {
          'retry-after': String(this.current.retryAfterSeconds),
        });
    }
    const answer = await this.perform(req, rel, body);
    if (write && this.random() < this.current.rateLost) return void req.socket.destroy();
    send(res, answer, {}, this.url);
  }

  private async perform(req: IncomingMessage, rel: string, body: string): Promise<Answer> {
    let resource: unknown;
    try {
      resource = body ? JSON.parse(body) : undefined;
    } catch {
      return fail(400, 'structure', 'the body is not JSON');
    }
    if (req.method === 'POST' && rel === '') {
      this.batches++;
      const entries = (resource as { entry?: BundleEntry[] } | undefined)?.entry ?? [];
      if (this.current.rejectWholeBatch && entries.length > 1 && entries.some((e) => this.rejected(e.resource))) {
        return fail(400, 'invalid', 'the batch holds an entry this server refuses');
      }
      const representation = /return=representation/.test(header(req, 'prefer') ?? '');
      return processBatch(this.engine, resource, representation, (e) => (this.rejected(e.resource) ? refused() : undefined));
    }
    if (this.rejected(resource)) return refused();
    const method = req.method as Interaction['method'];
    const ifNoneExist = header(req, 'if-none-exist');
    const ifMatch = header(req, 'if-match');
    return this.engine.perform({
      method,
      url: rel,
      ...(ifNoneExist ? { ifNoneExist } : {}),
      ...(ifMatch ? { ifMatch } : {}),
      ...(resource !== undefined ? { resource } : {}),
    });
  }

  private rejected(resource: unknown): boolean {
    const ids = (resource as { identifier?: { value?: string }[] } | undefined)?.identifier ?? [];
    return ids.some((i) => i.value !== undefined && this.current.rejectIdentifiers.includes(i.value));
  }

  private authRequired(): boolean {
    const o = this.options;
    return Boolean(o.smartClients?.length || o.clients?.length || o.staticTokens?.length);
  }

  private capability(): Resource {
    const o = this.options;
    return capabilityStatement({
      conditionalCreate: o.conditionalCreate ?? true,
      updateCreate: o.updateCreate ?? true,
      tokenUrl: this.tokenUrl,
      date: new Date(this.now()).toISOString(),
    });
  }

  private token(req: IncomingMessage, res: ServerResponse, body: string): void {
    const f = this.current;
    const granted = this.desk.grant(
      new URLSearchParams(body),
      req.headers.authorization,
      this.tokenUrl,
      f.tokenTtlSeconds,
      f.advertisedExpiresIn ?? f.tokenTtlSeconds,
    );
    res.writeHead(granted.status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(granted.body));
  }

  private async admin(req: IncomingMessage, res: ServerResponse, path: string, body: string): Promise<void> {
    const json = (value: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.method === 'GET' && path === '/_admin/stats') return json(this.stats());
    if (req.method === 'GET' && path === '/_admin/census') return json(await this.census());
    if (req.method !== 'POST' || path !== '/_admin/faults') return void res.writeHead(404).end();
    try {
      this.configure(JSON.parse(body) as Partial<FhirFaults>);
    } catch {
      return void res.writeHead(400).end();
    }
    json(this.current);
  }
}

function refused(): Answer {
  return fail(422, 'invalid', 'this server refuses this Observation (injected)');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function send(res: ServerResponse, a: Answer, extra: Record<string, string> = {}, base?: string): void {
  const headers: Record<string, string> = { 'content-type': FHIR_JSON, ...extra };
  if (a.etag) headers.etag = a.etag;
  if (a.lastModified) headers['last-modified'] = a.lastModified;
  if (a.location && base) headers.location = `${base}/${a.location}`;
  res.writeHead(a.status, headers).end(JSON.stringify(a.resource ?? a.outcome ?? {}));
}
