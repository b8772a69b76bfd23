// The LIMS contract as the test server implements it, one function per route. Misbehavior is rolled here too.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { rollFate, type LimsFaults, type ScriptedFate } from './faults.js';
import { fingerprintOf, type RecordBook } from './records.js';
import type { TokenDesk } from './tokens.js';

/** Shared state the routes work on. */
export interface RouteCtx {
  book: RecordBook;
  desk: TokenDesk;
  faults: () => LimsFaults;
  random: () => number;
  now: () => number;
  envelopeVersions: readonly string[];
  /** Requests told to hang, with their idempotency keys, until released or the server stops. */
  hung: Map<ServerResponse, string>;
  /** Scripted fates not yet taken, per record id. */
  scripts: Map<string, ScriptedFate[]>;
}

const problem = (res: ServerResponse, status: number, type: string, extra: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/problem+json', ...extra });
  res.end(JSON.stringify({ type: `https://lims.example/problems/${type}`, title: type }));
};

/** POST /oauth/token */
export function tokenRoute(ctx: RouteCtx, req: IncomingMessage, res: ServerResponse, body: string): void {
  const f = ctx.faults();
  const { status, body: answer } = ctx.desk.grant(
    new URLSearchParams(body),
    req.headers.authorization,
    f.tokenTtlSeconds,
    f.advertisedExpiresIn ?? f.tokenTtlSeconds,
  );
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(answer));
}

/** GET {resourcePath}/{id} */
export function getRoute(ctx: RouteCtx, req: IncomingMessage, res: ServerResponse, id: string): void {
  if (!ctx.desk.check(req.headers.authorization)) return problem(res, 401, 'unauthorized', { 'www-authenticate': 'Bearer error="invalid_token"' });
  const record = ctx.book.get(id);
  if (!record) return problem(res, 404, 'not-found');
  res.writeHead(200, { 'content-type': 'application/json', etag: record.etag });
  res.end(record.body);
}

/** RFC 8941 sf-string → its value, or null. */
export function parseSfString(header: string | undefined): string | null {
  const m = /^"((?:[^"\\]|\\["\\])*)"$/.exec(header?.trim() ?? '');
  return m?.[1] !== undefined ? m[1].replace(/\\(["\\])/g, '$1') : null;
}

/** PUT {resourcePath}/{id} */
export function putRoute(ctx: RouteCtx, req: IncomingMessage, res: ServerResponse, id: string, body: string): void {
  const f = ctx.faults();
  if (!ctx.desk.check(req.headers.authorization)) return problem(res, 401, 'unauthorized', { 'www-authenticate': 'Bearer error="invalid_token"' });
  const version = req.headers['x-envelope-version'];
  if (typeof version !== 'string' || !ctx.envelopeVersions.includes(version)) return problem(res, 400, 'envelope-version');
  const key = parseSfString(req.headers['idempotency-key'] as string | undefined);
  if (key === null) return problem(res, 400, 'idempotency-key-missing');
  try {
    JSON.parse(body);
  } catch {
    return problem(res, 400, 'malformed-json');
  }
  const forced = f.forcedStatus[id];
  if (forced !== undefined) return problem(res, forced, `forced-${forced}`);
  const fate = ctx.scripts.get(id)?.shift() ?? rollFate(f, ctx.random);
  if (fate === 'slow') return void setTimeout(() => apply(ctx, f, req, res, id, body, key, false), f.slowMs);
  if (answered(ctx, f, res, key, fate)) return;
  apply(ctx, f, req, res, id, body, key, fate === 'lost');
}

/** The contract proper: replay, precondition, apply; `lose` destroys the socket instead of answering (a replay's too). */
function apply(ctx: RouteCtx, f: LimsFaults, req: IncomingMessage, res: ServerResponse, id: string, body: string, key: string, lose: boolean): void {
  const fingerprint = fingerprintOf('PUT', req.url ?? '', body);
  const known = ctx.book.answer(key);
  if (known === 'processing') return problem(res, 409, 'idempotency-key-in-processing');
  if (known && known.fingerprint !== fingerprint) return problem(res, 422, 'idempotency-key-reused');
  if (known) {
    ctx.book.replays++;
    // The answer to a replay is lost like any other (the resend of a lost answer may be lost too).
    if (lostAnswer(ctx, f, req, lose)) return;
    res.writeHead(known.status, { 'content-type': 'application/json', etag: known.etag, 'idempotent-replayed': 'true' });
    return void res.end(known.body);
  }
  if (f.reject422.includes(id)) return problem(res, 422, 'unprocessable-result');
  const failed = preconditionFailure(ctx, f, req, id);
  if (failed) return problem(res, failed, 'precondition-failed');
  const answer = ctx.book.apply(id, body, key, fingerprint);
  if (!f.replayIdempotent) ctx.book.forgetAnswers();
  if (lostAnswer(ctx, f, req, lose)) return;
  res.writeHead(answer.status, { 'content-type': 'application/json', etag: answer.etag });
  res.end(answer.body);
}

/** The scripted loss, else one at the configured rate: the socket is destroyed instead of answering. */
function lostAnswer(ctx: RouteCtx, f: LimsFaults, req: IncomingMessage, lose: boolean): boolean {
  if (!lose && ctx.random() >= f.rateLost) return false;
  req.socket.destroy();
  return true;
}

/** Answers (or hangs) a PUT whose fate is a failure; false when the contract is to be applied. */
function answered(ctx: RouteCtx, f: LimsFaults, res: ServerResponse, key: string, fate: ScriptedFate): boolean {
  if (fate === 'serve' || fate === 'lost' || fate === 'slow') return false;
  if (fate === 'hang') {
    if (ctx.book.answer(key) === undefined) ctx.book.markProcessing(key);
    ctx.hung.set(res, key);
    return true;
  }
  const retryAfter = f.retryAfterAsDate ? new Date(ctx.now() + f.retryAfterSeconds * 1000).toUTCString() : `${f.retryAfterSeconds}`;
  problem(res, Number(fate), `status-${fate}`, fate === '500' ? {} : { 'retry-after': retryAfter });
  return true;
}

/** RFC 9110 13.1.1/13.1.2: a create-only write of an existing record, or a stale If-Match. */
function preconditionFailure(ctx: RouteCtx, f: LimsFaults, req: IncomingMessage, id: string): number | null {
  const current = ctx.book.get(id);
  if (req.headers['if-none-match']?.trim() === '*' && current) return 412;
  const ifMatch = req.headers['if-match'];
  if (ifMatch === undefined) return null;
  const wanted = ifMatch.split(',').map((t) => t.trim());
  if (current && (wanted.includes('*') || wanted.includes(current.etag))) return null;
  return f.staleStatus;
}
