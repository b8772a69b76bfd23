// The FHIR R4 sink: each outbox row becomes one Observation (fhir-observation.ts), a drain batch goes as one FHIR
// `batch` Bundle (R4 http.html#transaction: each entry succeeds or fails alone, so one bad result never fails the
// others, as a transaction would), and each entry's answer becomes that row's outcome through the step machine in
// fhir-steps.ts. A bundle the server refuses as a whole (400/413/422) is split in halves until the row it refuses
// stands alone. The sink never touches SQLite, never throws for I/O, and needs no FHIR library at run time.
import { readFileSync } from 'node:fs';
import { Agent, type Dispatcher } from 'undici';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-body.js';
import { decideCreateMode, type CreateMode, type ModeDecision } from './fhir-capability.js';
import { asOneExchange, classifyFhir } from './fhir-classify.js';
import { observationContent, toObservation, type ObservationOptions } from './fhir-observation.js';
import { afterAnswer, entryOf, firstStep, unexpected, type EntryAnswer, type Pending, type Step } from './fhir-steps.js';
import { retryAfterAt } from './lims-classify.js';
import { authedExchange } from './authed-exchange.js';
import type { LimsResponse } from './lims-http.js';
import { createTokenProvider, type TokenAuth, type TokenProvider } from './lims-token.js';
import { readRowPayload } from './row-payload.js';
import type { OutboxRow, Outcome, Sink } from '../delivery/contract.js';
import type { Log } from '../log.js';

/** The sink's configuration (the `sinks.fhir` section). */
export interface FhirSinkOptions extends ObservationOptions {
  /** Sink name in the outbox; defaults to `fhir`. */
  name?: string;
  /** The server's FHIR base URL, e.g. https://fhir.hospital.example/fhir/R4. */
  baseUrl: string;
  /** `auto` reads the CapabilityStatement; the others override it. */
  createMode: CreateMode | 'auto';
  /** Send quality-control results (tagged); when false a QC row is refused as a dead letter. */
  qc: boolean;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  caFile?: string;
  auth: TokenAuth | { kind: 'none' };
  /** Keep-alive connections to the server (batches in flight at once). */
  connections: number;
  /** Bytes of an answer (the server's, its token endpoint's) read at most; DEFAULT_MAX_ANSWER_BYTES when unset. */
  maxAnswerBytes?: number;
}

/** What the composition root (or a test) injects. */
export interface FhirSinkDeps {
  dispatcher?: Dispatcher;
  now: () => number;
  /** A clock that never steps (a token's lifetime); default `now`. */
  monotonic?: () => number;
  log: Log;
  readSecret?: (path: string) => Promise<string>;
  /** Told of each answer cut at maxAnswerBytes (a counter). */
  overCap?: () => void;
}

/** The FHIR sink; `createMode()` says how it creates (null until the CapabilityStatement was read). */
export interface FhirSink extends Sink {
  createMode(): CreateMode | null;
}

type Sent = Extract<LimsResponse, { kind: 'answer' | 'failure' }>;
type Result = Outcome | Step;
const ROUNDS = 4;
const FHIR_JSON = 'application/fhir+json';

/** Builds the FHIR sink. */
export function createFhirSink(options: FhirSinkOptions, deps: FhirSinkDeps): FhirSink {
  return new FhirDelivery(options, deps);
}

class FhirDelivery implements FhirSink {
  readonly name: string;
  private readonly owned: Agent | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly tokens: TokenProvider | null;
  private readonly base: URL;
  private decided: ModeDecision | null = null;

  constructor(
    private readonly options: FhirSinkOptions,
    private readonly deps: FhirSinkDeps,
  ) {
    this.name = options.name ?? 'fhir';
    this.base = new URL(options.baseUrl.replace(/\/$/, ''));
    this.owned = deps.dispatcher ? undefined : defaultAgent(options);
    this.dispatcher = deps.dispatcher ?? this.owned!;
    const auth = options.auth;
    this.tokens =
      auth.kind === 'none'
        ? null
        : createTokenProvider(auth, {
            dispatcher: this.dispatcher,
            now: deps.now,
            ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
            timeoutMs: options.timeouts.headersMs,
            maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
            ...(deps.overCap ? { overCap: deps.overCap } : {}),
            ...(deps.readSecret ? { readSecret: deps.readSecret } : {}),
          });
    if (options.createMode !== 'auto') this.decided = { ok: true, mode: options.createMode };
  }

  createMode(): CreateMode | null {
    return this.decided?.ok ? this.decided.mode : null;
  }

  async deliver(batch: readonly OutboxRow[], signal: AbortSignal): Promise<Outcome[]> {
    const out: Outcome[] = new Array<Outcome>(batch.length);
    try {
      await this.deliverInto(batch, out, signal);
    } catch (err) {
      // A bug, not I/O: keep the rows (never dead-letter on our own mistake) and say so loudly.
      this.deps.log.error({ sink: this.name, err: err instanceof Error ? err.message : String(err) }, 'FHIR sink bug');
    }
    for (let i = 0; i < out.length; i++) out[i] ??= { kind: 'retry', reason: 'internal error in the FHIR sink', scope: 'record' };
    return out;
  }

  async close(): Promise<void> {
    await this.owned?.close();
  }

  private async deliverInto(batch: readonly OutboxRow[], out: Outcome[], signal: AbortSignal): Promise<void> {
    if (signal.aborted) return void out.fill({ kind: 'retry', reason: 'delivery aborted', scope: 'record' });
    const prepared = batch.map((row, index) => this.prepare(row, index));
    const pending = prepared.filter((p): p is Omit<Pending, 'step'> & { etag: string | null } => !('kind' in p));
    prepared.forEach((p, i) => ('kind' in p ? (out[i] = p) : undefined));
    if (pending.length === 0) return;
    const mode = await this.mode(signal);
    if (!mode.ok) return void asOneExchange(pending.map(() => mode.outcome)).forEach((o, i) => (out[pending[i]!.index] = o));
    let steps: Pending[] = pending.map((p) => ({
      ...p,
      step: firstStep(p.etag, p.recordId, mode.mode, this.identifierQuery(p.observation.identifier[0]!.value)),
    }));
    for (let round = 0; round < ROUNDS && steps.length > 0; round++) {
      const results = await this.send(steps, signal);
      const next: Pending[] = [];
      steps.forEach((p, i) => {
        const r = results[i]!;
        if (isStep(r)) next.push({ ...p, step: r });
        else out[p.index] = r;
      });
      steps = next;
    }
    for (const p of steps) out[p.index] = { kind: 'retry', reason: 'no settled answer from the FHIR server', scope: 'record' };
  }

  private prepare(row: OutboxRow, index: number): Outcome | (Omit<Pending, 'step'> & { etag: string | null }) {
    const read = readRowPayload(row);
    if (!read.ok) return read.outcome;
    const payload = read.payload;
    if (payload.result.qc && !this.options.qc) return { kind: 'dead', reason: 'a quality-control result, and sinks.fhir.qc is off' };
    const observation = toObservation(payload, this.options);
    return { index, observation, content: observationContent(observation)!, recordId: row.recordId, etag: row.etag };
  }

  private identifierQuery(key: string): string {
    return `${encodeURIComponent(this.options.identifierSystem)}|${encodeURIComponent(key)}`;
  }

  /** How first deliveries create, read once from the CapabilityStatement (read again after a failure). */
  private async mode(signal: AbortSignal): Promise<{ ok: true; mode: CreateMode } | { ok: false; outcome: Outcome }> {
    if (!this.decided) {
      const res = await this.authed(signal, 'GET', '/metadata');
      if ('outcome' in res) return { ok: false, outcome: res.outcome };
      if (res.kind === 'failure' || res.status !== 200) return { ok: false, outcome: this.whole(res, 'reading the CapabilityStatement') };
      this.decided = decideCreateMode(parseJson(res.body));
      this.deps.log[this.decided.ok ? 'info' : 'warn'](
        { sink: this.name, ...(this.decided.ok ? { createMode: this.decided.mode } : { reason: this.decided.reason }) },
        'FHIR CapabilityStatement read',
      );
    }
    const d = this.decided;
    if (!d.ok) this.decided = null;
    return d.ok ? d : { ok: false, outcome: { kind: 'retry', reason: d.reason, scope: 'sink' } };
  }

  /** Sends the rows' steps as one batch; a bundle refused as a whole is bisected until the refused row stands alone. */
  private async send(steps: readonly Pending[], signal: AbortSignal): Promise<Result[]> {
    const bundle = { resourceType: 'Bundle', type: 'batch', entry: steps.map(entryOf) };
    const res = await this.authed(signal, 'POST', '', JSON.stringify(bundle));
    if ('outcome' in res) return asOneExchange(steps.map(() => res.outcome));
    if (res.kind === 'answer' && res.status === 200) return this.entries(steps, res);
    if (res.kind === 'answer' && [400, 413, 422].includes(res.status) && steps.length > 1) {
      const half = Math.ceil(steps.length / 2);
      return [...(await this.send(steps.slice(0, half), signal)), ...(await this.send(steps.slice(half), signal))];
    }
    const outcome = this.whole(res, 'sending the batch');
    return asOneExchange(steps.map(() => outcome));
  }

  private entries(steps: readonly Pending[], res: Extract<Sent, { kind: 'answer' }>): Result[] {
    const doc = parseJson(res.body) as { resourceType?: unknown; entry?: EntryAnswer[] } | null;
    const entries = doc?.resourceType === 'Bundle' && Array.isArray(doc.entry) ? doc.entry : null;
    if (!entries || entries.length !== steps.length) {
      const outcome: Outcome = {
        kind: 'retry',
        reason: `the FHIR server answered the batch with ${entries ? `${entries.length} entries for ${steps.length}` : 'no Bundle'}`,
        scope: 'sink',
      };
      return asOneExchange(steps.map(() => outcome));
    }
    const now = this.deps.now();
    const retryAfter = retryAfterAt(res.headers['retry-after'], now);
    return asOneExchange(steps.map((p, i) => afterAnswer(p, entries[i] ?? {}, now, retryAfter)));
  }

  /** The outcome of a request answered as a whole (no per-entry answers), by the classification table. */
  private whole(res: Sent, what: string): Outcome {
    if (res.kind === 'failure') {
      const verdict = classifyFhir({ kind: 'failure', failure: res.failure });
      const scope = verdict.action === 'retry' ? verdict.scope : 'sink';
      return { kind: 'retry', reason: `${what}: ${verdict.why} (${this.redact(res.message)})`, scope };
    }
    const now = this.deps.now();
    const outcome = unexpected(
      { response: { status: String(res.status), outcome: parseJson(res.body) } },
      res.status,
      now,
      retryAfterAt(res.headers['retry-after'], now),
    );
    return 'reason' in outcome ? { ...outcome, reason: `${what}: ${this.redact(outcome.reason)}` } : outcome;
  }

  /** Sends with a bearer token when one is configured (authed-exchange.ts: a 401 fetches a fresh token once). */
  private async authed(signal: AbortSignal, method: 'GET' | 'POST', path: string, body?: string): Promise<Sent | { outcome: Outcome }> {
    const headers: Record<string, string> = { accept: FHIR_JSON, ...(body ? { 'content-type': FHIR_JSON, prefer: 'return=minimal' } : {}) };
    const res = await authedExchange(
      {
        dispatcher: this.dispatcher,
        tokens: this.tokens,
        origin: this.base.origin,
        headersTimeoutMs: this.options.timeouts.headersMs,
        bodyTimeoutMs: this.options.timeouts.bodyMs,
        maxAnswerBytes: this.options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
        ...(this.deps.overCap ? { overCap: this.deps.overCap } : {}),
      },
      signal,
      { method, path: this.base.pathname.replace(/\/$/, '') + path, headers, ...(body ? { body } : {}) },
    );
    if (res.kind === 'no-token') return { outcome: { kind: 'retry', reason: res.reason, scope: 'sink' } };
    // A fresh token refused too means wrong credentials or scopes: every result is affected alike.
    if (res.kind === 'token-refused') return { outcome: { kind: 'retry', reason: 'the FHIR server refused a freshly issued token', scope: 'sink' } };
    return res;
  }

  private redact(text: string): string {
    return this.tokens ? this.tokens.redact(text) : text;
  }
}

function defaultAgent(options: FhirSinkOptions): Agent {
  return new Agent({
    connections: options.connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: options.timeouts.connectMs, ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}) },
  });
}

function isStep(r: Result): r is Step {
  return r.kind === 'create' || r.kind === 'put' || r.kind === 'read' || r.kind === 'search';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
