// Bearer tokens for the LIMS and FHIR sinks: OAuth2 client credentials (RFC 6749 4.4) with a client secret or, for
// SMART Backend Services, with a signed JWT (client-assertion.ts); or a static token from a file.
// Secrets live only in this module's closures: never logged, never in a reason, redacted from bodies we quote.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Dispatcher } from 'undici';
import { clientAssertion, signingKey, type AssertionAlgorithm } from './client-assertion.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-body.js';
import { refusalReason } from './clock-skew.js';
import { RedactionList } from './redaction-list.js';
import { exchange } from './lims-http.js';

/** How a sink authenticates, as configured (the LIMS and FHIR sinks alike). */
export type TokenAuth =
  | { kind: 'oauth2'; tokenUrl: string; clientId: string; clientSecretFile: string; scope?: string; clientAuth?: 'basic' | 'form' }
  | { kind: 'static'; tokenFile: string }
  // SMART Backend Services: the client authenticates with a JWT signed by its private key (RFC 7523 private_key_jwt).
  | { kind: 'smart-backend'; tokenUrl: string; clientId: string; privateKeyFile: string; algorithm: AssertionAlgorithm; keyId: string; scope?: string };

/** The LIMS sink's name for TokenAuth. */
export type LimsAuth = TokenAuth;

/** A token, or a secret-free reason why none could be had (`unreachable`: no connection to the token endpoint). */
export type TokenResult = { ok: true; token: string } | { ok: false; reason: string; unreachable?: boolean };

/** Hands out bearer tokens; concurrent callers share one in-flight fetch. */
export interface TokenProvider {
  /** A token valid for a while yet (cached). */
  token(): Promise<TokenResult>;
  /** A token other than `stale` (which the LIMS just refused); one fetch however many callers ask. */
  refresh(stale: string): Promise<TokenResult>;
  /** `text` with every secret and token this provider knows replaced by `[redacted]`. */
  redact(text: string): string;
}

/** pino `redact` paths for the composition root: wherever a secret could ride along in a logged object. */
export const limsRedactPaths: readonly string[] = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.authorization',
  'clientSecret',
  '*.clientSecret',
  'access_token',
  '*.access_token',
  'token',
  '*.token',
];

/** What a provider needs from outside. */
export interface TokenDeps {
  dispatcher: Dispatcher;
  /** Wall time: what an assertion is signed with. */
  now: () => number;
  /** A clock that never steps, for a token's lifetime; default `now`. */
  monotonic?: () => number;
  readSecret?: (path: string) => Promise<string>;
  timeoutMs: number;
  /** Bytes of the token endpoint's answer read at most; DEFAULT_MAX_ANSWER_BYTES when unset. */
  maxAnswerBytes?: number;
  /** Told of each answer cut at maxAnswerBytes (a counter). */
  overCap?: () => void;
  /** A fresh JWT id per client assertion; defaults to a random UUID. */
  jti?: () => string;
}

const readTrimmed = async (path: string): Promise<string> => (await readFile(path, 'utf8')).trim();

/** Builds the provider for the configured auth kind. */
export function createTokenProvider(auth: LimsAuth, deps: TokenDeps): TokenProvider {
  const known = new RedactionList();
  const redact = (text: string): string => known.redact(text);
  const fetchToken = auth.kind === 'static' ? staticToken(auth, deps, known) : clientCredentials(auth, deps, known, redact);
  return { ...cachedSingleFlight(fetchToken, deps.monotonic ?? deps.now), redact };
}

interface Issued {
  token: string;
  /** On the monotonic clock: a step of the wall clock neither keeps a token past its life nor drops it early. */
  expiresAt: number;
}
type Fetch = (signal: AbortSignal) => Promise<{ ok: true; issued: Issued } | Extract<TokenResult, { ok: false }>>;

function cachedSingleFlight(fetchToken: Fetch, now: () => number): Omit<TokenProvider, 'redact'> {
  let cached: Issued | undefined;
  let inflight: Promise<TokenResult> | undefined;
  // The shared fetch belongs to no single caller: one caller's abort must not fail everybody waiting on it.
  const own = new AbortController().signal;
  const fetchShared = (): Promise<TokenResult> => {
    inflight ??= fetchToken(own)
      .then((r): TokenResult => {
        if (!r.ok) return r;
        cached = r.issued;
        return { ok: true, token: r.issued.token };
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  const token = (): Promise<TokenResult> => (cached && now() < cached.expiresAt ? Promise.resolve({ ok: true, token: cached.token }) : fetchShared());
  const refresh = (stale: string): Promise<TokenResult> => {
    // Somebody already replaced the refused token: use theirs instead of fetching again.
    if (cached && cached.token !== stale) return token();
    cached = undefined;
    return fetchShared();
  };
  return { token, refresh };
}

/** Refresh this long before the advertised expiry: clock skew and requests already queued with the old token. */
export function refreshMargin(lifetimeMs: number): number {
  return Math.min(60_000, lifetimeMs / 10);
}

type ClientAuth = Extract<TokenAuth, { kind: 'oauth2' | 'smart-backend' }>;

function clientCredentials(auth: ClientAuth, deps: TokenDeps, known: RedactionList, redact: (text: string) => string): Fetch {
  const monotonic = deps.monotonic ?? deps.now;
  const url = new URL(auth.tokenUrl);
  const file = auth.kind === 'oauth2' ? auth.clientSecretFile : auth.privateKeyFile;
  return async (signal) => {
    let secret: string;
    try {
      secret = await (deps.readSecret ?? readTrimmed)(file);
    } catch {
      return { ok: false, reason: `${auth.kind === 'oauth2' ? 'client secret' : 'private key'} file unreadable: ${file}` };
    }
    known.add(secret);
    const started = monotonic();
    const request = auth.kind === 'oauth2' ? tokenRequest(auth, secret) : assertionRequest(auth, secret, deps.now(), deps.jti ?? randomUUID);
    if ('reason' in request) return { ok: false, reason: request.reason };
    known.add(request.form.get('client_assertion') ?? '');
    const { headers, form } = request;
    const res = await exchange(deps.dispatcher, {
      origin: url.origin,
      path: url.pathname + url.search,
      method: 'POST',
      headers,
      body: form.toString(),
      headersTimeoutMs: deps.timeoutMs,
      bodyTimeoutMs: deps.timeoutMs,
      maxAnswerBytes: deps.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
      ...(deps.overCap ? { overCap: deps.overCap } : {}),
      signal,
    });
    if (res.kind === 'failure') {
      const what = res.failure === 'too-large' ? 'answer over the size cap' : res.failure;
      return { ok: false, reason: `token endpoint ${what}`, ...(res.failure === 'connect' ? { unreachable: true } : {}) };
    }
    if (res.status !== 200) return { ok: false, reason: refusalReason(res.status, res, deps.now(), redact) };
    return parseTokenResponse(res.body, started, known);
  };
}

/** RFC 6749 2.3.1: HTTP Basic with the form-encoded id and secret is the method servers must support. */
function tokenRequest(auth: Extract<LimsAuth, { kind: 'oauth2' }>, secret: string): { headers: Record<string, string>; form: URLSearchParams } {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (auth.scope) form.set('scope', auth.scope);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (auth.clientAuth === 'form') {
    form.set('client_id', auth.clientId);
    form.set('client_secret', secret);
  } else {
    const pair = `${encodeURIComponent(auth.clientId)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }
  return { headers, form };
}

/** SMART Backend Services: client_credentials with `client_assertion_type` jwt-bearer and the signed assertion. */
function assertionRequest(
  auth: Extract<TokenAuth, { kind: 'smart-backend' }>,
  pem: string,
  now: number,
  jti: () => string,
): { headers: Record<string, string>; form: URLSearchParams } | { reason: string } {
  const key = signingKey(pem, auth.algorithm);
  if (!key.ok) return { reason: `${key.reason}: ${auth.privateKeyFile}` };
  const assertion = clientAssertion(key.key, auth.algorithm, { clientId: auth.clientId, audience: auth.tokenUrl, keyId: auth.keyId, now, jti: jti() });
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  });
  if (auth.scope) form.set('scope', auth.scope);
  return { headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, form };
}

function parseTokenResponse(body: string, started: number, known: RedactionList): Awaited<ReturnType<Fetch>> {
  let doc: { access_token?: unknown; expires_in?: unknown };
  try {
    doc = JSON.parse(body) as typeof doc;
  } catch {
    return { ok: false, reason: 'token endpoint answered non-JSON' };
  }
  if (typeof doc.access_token !== 'string' || !doc.access_token) return { ok: false, reason: 'token endpoint gave no access_token' };
  known.add(doc.access_token);
  // RFC 6749 5.1: expires_in is only RECOMMENDED; without it assume a short life rather than forever.
  const lifetimeMs = (typeof doc.expires_in === 'number' && doc.expires_in > 0 ? doc.expires_in : 300) * 1000;
  return { ok: true, issued: { token: doc.access_token, expiresAt: started + lifetimeMs - refreshMargin(lifetimeMs) } };
}

function staticToken(auth: Extract<LimsAuth, { kind: 'static' }>, deps: TokenDeps, known: RedactionList): Fetch {
  return async () => {
    try {
      // Re-read on every refresh, so an operator can rotate the file without restarting the gateway.
      const token = await (deps.readSecret ?? readTrimmed)(auth.tokenFile);
      if (!token) return { ok: false, reason: `token file is empty: ${auth.tokenFile}` };
      known.add(token);
      return { ok: true, issued: { token, expiresAt: Number.POSITIVE_INFINITY } };
    } catch {
      return { ok: false, reason: `token file unreadable: ${auth.tokenFile}` };
    }
  };
}
