// The LIMS REST sink: one conditional, idempotent PUT per outbox row, classified by the table in lims-classify.ts.
// labgate never overwrites the LIMS blindly: a failed precondition is resolved by reading what the LIMS holds
// (our own earlier write whose answer was lost → delivered; anybody else's change → conflict for a person).
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { Agent, type Dispatcher } from 'undici';
import type { ResultPayload } from '../payload.js';
import { classify, problemOf, retryAfterAt } from './lims-classify.js';
import { buildEnvelope, ENVELOPE_VERSION, idempotencyKey, limsClinicalContent, sfString } from './lims-envelope.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-body.js';
import { authedExchange, type AuthedRequest } from './authed-exchange.js';
import type { LimsResponse } from './lims-http.js';
import { createLimiter, type Limiter } from './lims-limiter.js';
import { createTokenProvider, type LimsAuth, type TokenProvider } from './lims-token.js';
import { readRowPayload } from './row-payload.js';
import type { OutboxRow, Outcome, Sink } from '../delivery/contract.js';
import type { Log } from '../log.js';

/** The sink's configuration (the `lims` section of the config file). */
export interface LimsSinkOptions {
  /** Sink name in the outbox; defaults to `lims`. */
  name?: string;
  /** scheme://host[:port], no trailing slash. */
  baseUrl: string;
  /** e.g. `/api/v1/results`; the record id is appended. */
  resourcePath: string;
  /** Requests in flight at once across all concurrent deliver() calls (on up to limsConnections(concurrency) keep-alive connections). */
  concurrency: number;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  /** PEM file of the CA that signed the LIMS certificate, when it is not a public one. */
  caFile?: string;
  auth: LimsAuth;
  /** Wait after a 409 "idempotency key in processing" before the row is tried again. */
  processingRetryMs?: number;
  /** Bytes of an answer (the LIMS's, its token endpoint's) read at most; DEFAULT_MAX_ANSWER_BYTES when unset. */
  maxAnswerBytes?: number;
}

/** What the composition root (or a test) injects. */
export interface LimsSinkDeps {
  /** Defaults to an undici Agent: one keep-alive pool per origin (the token URL may be another host). */
  dispatcher?: Dispatcher;
  now: () => number;
  /** A clock that never steps (a token's lifetime); default `now`. */
  monotonic?: () => number;
  log: Log;
  gatewayId: string;
  /** Reads a secret file; defaults to fs. */
  readSecret?: (path: string) => Promise<string>;
  /** The token provider shared with the orders client (one token for results, orders and dispatches). */
  tokens?: TokenProvider;
  /** Told of each answer cut at maxAnswerBytes (a counter). */
  overCap?: () => void;
}

/** Builds the LIMS sink. */
export function createLimsSink(options: LimsSinkOptions, deps: LimsSinkDeps): Sink {
  const owned = deps.dispatcher ? undefined : defaultAgent(options);
  const dispatcher = deps.dispatcher ?? owned!;
  const tokens =
    deps.tokens ??
    createTokenProvider(options.auth, {
      dispatcher,
      now: deps.now,
      ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
      timeoutMs: options.timeouts.headersMs,
      maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
      ...(deps.overCap ? { overCap: deps.overCap } : {}),
      ...(deps.readSecret ? { readSecret: deps.readSecret } : {}),
    });
  const limiter = createLimiter(options.concurrency);
  const ctx: Ctx = { options, deps, dispatcher, tokens, limiter, origin: new URL(options.baseUrl).origin };
  return {
    name: options.name ?? 'lims',
    deliver: (batch, signal) =>
      withLocalSignal(signal, options.concurrency, (local) => Promise.all(batch.map((row) => limiter.run(() => deliverRow(ctx, row, local))))),
    close: async () => {
      await owned?.close();
    },
  };
}

/**
 * Keep-alive connections for `concurrency` requests in flight: a quarter more (at least one). The limiter hands a slot
 * to the next request as soon as an answer is read, a moment before undici's pool counts that connection free again,
 * and a connection the LIMS closed is only opened again when a request is given to it: with exactly `concurrency`
 * connections the next request waited in the pool's queue (measured at 20 ms latency and concurrency 16: no free
 * connection at nearly every request, each exchange 0.6-1 ms longer, 1.5 ms with 5 % of answers lost). The LIMS still
 * sees at most `concurrency` requests at once.
 */
export function limsConnections(concurrency: number): number {
  return concurrency + Math.ceil(concurrency / 4);
}

function defaultAgent(options: LimsSinkOptions): Agent {
  return new Agent({
    connections: limsConnections(options.concurrency),
    // One request per connection at a time: a slow PUT must not hold the ones queued behind it.
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: options.timeouts.connectMs, ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}) },
  });
}

interface Ctx {
  options: LimsSinkOptions;
  deps: LimsSinkDeps;
  dispatcher: Dispatcher;
  tokens: TokenProvider;
  limiter: Limiter;
  origin: string;
}

/** A signal of our own that follows the caller's: undici adds listeners per request, more than Node's default 10. */
async function withLocalSignal<R>(signal: AbortSignal, concurrency: number, fn: (local: AbortSignal) => Promise<R>): Promise<R> {
  const local = new AbortController();
  setMaxListeners(4 * concurrency + 10, local.signal);
  const follow = (): void => local.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  try {
    return await fn(local.signal);
  } finally {
    signal.removeEventListener('abort', follow);
  }
}

async function deliverRow(ctx: Ctx, row: OutboxRow, signal: AbortSignal): Promise<Outcome> {
  try {
    const outcome = await deliverChecked(ctx, row, signal);
    if (outcome.kind !== 'delivered') {
      const level = outcome.kind === 'retry' ? 'debug' : 'warn';
      ctx.deps.log[level]({ recordId: row.recordId, outcome: outcome.kind, reason: outcome.reason }, 'lims delivery not done');
    }
    return outcome;
  } catch (err) {
    // A bug, not I/O: keep the row (never dead-letter on our own mistake) and say so loudly.
    ctx.deps.log.error({ recordId: row.recordId, err: err instanceof Error ? err.message : String(err) }, 'lims sink bug');
    return { kind: 'retry', reason: 'internal error in the LIMS sink', scope: 'record' };
  }
}

async function deliverChecked(ctx: Ctx, row: OutboxRow, signal: AbortSignal): Promise<Outcome> {
  // Rows still waiting for a slot when the drain stops are not sent at all.
  if (signal.aborted) return { kind: 'retry', reason: 'delivery aborted', scope: 'record' };
  const read = readRowPayload(row);
  if (!read.ok) return read.outcome;
  const payload = read.payload;
  const body = JSON.stringify(buildEnvelope(payload, ctx.deps.gatewayId));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'idempotency-key': sfString(idempotencyKey(row.recordId, body)),
    'x-envelope-version': ENVELOPE_VERSION,
    // RFC 9110 13.1.2: `*` makes the first write create-only; a correction names the version it replaces.
    ...(row.etag === null ? { 'if-none-match': '*' } : { 'if-match': row.etag }),
  };
  const res = await authed(ctx, signal, { method: 'PUT', path: recordPath(ctx, row), headers, body });
  if ('outcome' in res) return res.outcome;
  return outcomeOf(ctx, row, payload, res, signal);
}

function recordPath(ctx: Ctx, row: OutboxRow): string {
  return `${new URL(ctx.options.baseUrl).pathname.replace(/\/$/, '')}${ctx.options.resourcePath}/${encodeURIComponent(row.recordId)}`;
}

type Sent = Extract<LimsResponse, { kind: 'answer' | 'failure' }>;

/**
 * Sends with a bearer token (authed-exchange.ts); a missing or refused token is a sink-wide retry. An answer lost with
 * its connection (reset, closed before the answer: a load balancer dropping an idle keep-alive connection as we reuse
 * it, one instance of several restarting) is asked for once more at once, on another connection: the sink's PUTs and
 * GETs are idempotent (RFC 9110 9.2.2; a PUT carries its Idempotency-Key too), and RFC 9112 9.3.1 lets a client resend
 * an idempotent request whose connection closed before the answer. Lost again, it is the record's retry as before.
 */
async function authed(ctx: Ctx, signal: AbortSignal, req: AuthedRequest): Promise<Sent | { outcome: Outcome }> {
  const deps = {
    dispatcher: ctx.dispatcher,
    tokens: ctx.tokens,
    origin: ctx.origin,
    headersTimeoutMs: ctx.options.timeouts.headersMs,
    bodyTimeoutMs: ctx.options.timeouts.bodyMs,
    maxAnswerBytes: ctx.options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
    ...(ctx.deps.overCap ? { overCap: ctx.deps.overCap } : {}),
    heard: (status: number) => ctx.limiter.heard(status === 429),
  };
  let res = await authedExchange(deps, signal, req);
  if (res.kind === 'failure' && res.failure === 'lost') res = await authedExchange(deps, signal, req);
  if (res.kind === 'no-token') return { outcome: { kind: 'retry', reason: res.reason, scope: res.unreachable ? 'unreachable' : 'sink' } };
  // A fresh token refused too means wrong credentials or a broken LIMS: every record is affected alike.
  if (res.kind === 'token-refused') return { outcome: { kind: 'retry', reason: 'LIMS refused a freshly issued token', scope: 'sink' } };
  return res;
}

async function outcomeOf(ctx: Ctx, row: OutboxRow, ours: ResultPayload, res: Sent, signal: AbortSignal): Promise<Outcome> {
  const problem = res.kind === 'answer' ? problemOf(res.body) : null;
  const verdict = classify(res.kind === 'answer' ? { kind: 'answer', status: res.status, problem } : res);
  const status = res.kind === 'answer' ? `${res.status}` : res.failure;
  switch (verdict.action) {
    case 'delivered':
      return delivered(
        res.kind === 'answer' ? res.headers.etag : undefined,
        res.kind === 'answer' && res.headers['idempotent-replayed'] === 'true' ? 'replayed by the LIMS' : undefined,
      );
    case 'check-record':
      return checkRecord(ctx, row, ours, signal);
    case 'dead': {
      const body = res.kind === 'answer' ? ctx.tokens.redact(Buffer.from(res.body).subarray(0, 500).toString()) : '';
      return { kind: 'dead', reason: `${verdict.why}: ${status} ${body}`.trim() };
    }
    case 'retry':
      return retryOutcome(ctx, verdict, status, res);
    case 'refresh-token':
      // authed() already refreshed once; a second 401 never reaches here.
      return { kind: 'retry', reason: 'LIMS refused the token', scope: 'sink' };
  }
}

function retryOutcome(ctx: Ctx, verdict: Extract<ReturnType<typeof classify>, { action: 'retry' }>, status: string, res: Sent): Outcome {
  const now = ctx.deps.now();
  const notBefore =
    verdict.delay === 'processing'
      ? now + (ctx.options.processingRetryMs ?? 1000)
      : verdict.delay === 'retry-after' && res.kind === 'answer'
        ? retryAfterAt(res.headers['retry-after'], now)
        : undefined;
  const detail = res.kind === 'failure' ? ` (${ctx.tokens.redact(res.message)})` : '';
  return { kind: 'retry', reason: `${verdict.why}: ${status}${detail}`, scope: verdict.scope, ...(notBefore !== undefined ? { notBefore } : {}) };
}

/** A non-200 answer to the GET: dead and retry rows apply as for the PUT; anything else is retried later. */
function unreadable(ctx: Ctx, res: Extract<Sent, { kind: 'answer' }>): Outcome {
  const verdict = classify({ kind: 'answer', status: res.status, problem: problemOf(res.body) });
  if (verdict.action === 'retry') return retryOutcome(ctx, verdict, `${res.status}`, res);
  const reason = `reading the record after a failed precondition: ${res.status}`;
  return verdict.action === 'dead' ? { kind: 'dead', reason } : { kind: 'retry', reason, scope: 'record' };
}

function delivered(etag: string | undefined, detail?: string): Outcome {
  return { kind: 'delivered', ...(etag ? { etag } : {}), ...(detail ? { detail } : {}) };
}

/** After a failed precondition: equal clinical content means our write landed; anything else is a conflict. */
async function checkRecord(ctx: Ctx, row: OutboxRow, ours: ResultPayload, signal: AbortSignal): Promise<Outcome> {
  const res = await authed(ctx, signal, { method: 'GET', path: recordPath(ctx, row), headers: { accept: 'application/json' } });
  if ('outcome' in res) return res.outcome;
  if (res.kind === 'failure') return { kind: 'retry', reason: `reading the record after a failed precondition: ${res.failure}`, scope: 'sink' };
  // Gone between our write and the read (deleted by somebody): try again later rather than guess.
  if (res.status === 404) return { kind: 'retry', reason: 'record vanished after a failed precondition', scope: 'record' };
  if (res.status !== 200) return unreadable(ctx, res);
  let theirs: unknown;
  try {
    theirs = JSON.parse(res.body);
  } catch {
    theirs = null;
  }
  const mine = limsClinicalContent(buildEnvelope(ours, ctx.deps.gatewayId));
  if (mine !== null && limsClinicalContent(theirs) === mine) return delivered(res.headers.etag, 'already in the LIMS with the same clinical content');
  // Their ETag travels with the conflict: a person who forwards labgate's version then supersedes exactly the version
  // they saw (If-Match); a later edit in the LIMS fails that precondition again and is a new conflict.
  const etag = res.headers.etag;
  return { kind: 'conflict', reason: 'the LIMS holds different clinical content for this record', theirs: res.body, ...(etag ? { etag } : {}) };
}
