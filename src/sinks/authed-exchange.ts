// One HTTP exchange under a bearer token, for every sink that sends one (the LIMS results sink, orders client and
// dispatch sink, the FHIR sink): a 401 fetches a fresh token once and resends at once; a fresh token refused too is
// its own answer (wrong credentials or scopes, which concern every record alike). Every failure comes back as a value.
import type { Dispatcher } from 'undici';
import { exchange, type LimsResponse } from './lims-http.js';
import type { TokenProvider } from './lims-token.js';

/** What an authenticated exchange needs. */
export interface AuthedDeps {
  dispatcher: Dispatcher;
  /** None: the request goes without authorization, and a 401 is an answer like any other. */
  tokens: TokenProvider | null;
  /** scheme://host:port */
  origin: string;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Bytes of an answer read at most (answer-body.ts). */
  maxAnswerBytes: number;
  /** Told of each answer cut at the cap. */
  overCap?: () => void;
  /** Told about every HTTP answer (the results sink's pacing listens for 429). */
  heard?: (status: number) => void;
}

/** A request without its origin, timeouts and authorization. */
export interface AuthedRequest {
  method: 'GET' | 'PUT' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The server's answer, no answer, no token to be had, or a fresh token refused too (wrong credentials, a broken server). */
export type AuthedResponse =
  Extract<LimsResponse, { kind: 'answer' | 'failure' }> | { kind: 'no-token'; reason: string; unreachable: boolean } | { kind: 'token-refused' };

/** Sends with a bearer token; on 401 fetches a fresh token once and resends. Never throws for I/O. */
export async function authedExchange(deps: AuthedDeps, signal: AbortSignal, req: AuthedRequest): Promise<AuthedResponse> {
  let tok = deps.tokens ? await deps.tokens.token() : null;
  for (let attempt = 0; ; attempt++) {
    if (tok && !tok.ok) return { kind: 'no-token', reason: tok.reason, unreachable: tok.unreachable === true };
    const res = await exchange(deps.dispatcher, {
      ...req,
      origin: deps.origin,
      headers: tok ? { ...req.headers, authorization: `Bearer ${tok.token}` } : req.headers,
      headersTimeoutMs: deps.headersTimeoutMs,
      bodyTimeoutMs: deps.bodyTimeoutMs,
      maxAnswerBytes: deps.maxAnswerBytes,
      ...(deps.overCap ? { overCap: deps.overCap } : {}),
      signal,
    });
    if (res.kind === 'answer') deps.heard?.(res.status);
    if (res.kind !== 'answer' || res.status !== 401 || !deps.tokens || !tok) return res;
    if (attempt > 0) return { kind: 'token-refused' };
    tok = await deps.tokens.refresh(tok.token);
  }
}
