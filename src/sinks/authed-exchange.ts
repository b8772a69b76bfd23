// One exchange with the LIMS under a bearer token, shared by the results sink, the orders client and the dispatch
// sink: a 401 fetches a fresh token once and resends at once. Every failure comes back as a value.
import type { Dispatcher } from 'undici';
import { exchange, type LimsResponse } from './lims-http.js';
import type { TokenProvider } from './lims-token.js';

/** What an authenticated exchange needs. */
export interface AuthedDeps {
  dispatcher: Dispatcher;
  tokens: TokenProvider;
  /** scheme://host:port */
  origin: string;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Told about every HTTP answer (the results sink's pacing listens for 429). */
  heard?: (status: number) => void;
}

/** A request without its origin, timeouts and authorization. */
export interface AuthedRequest {
  method: 'GET' | 'PUT';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** The LIMS's answer, no answer, no token to be had, or a fresh token refused too (wrong credentials, broken LIMS). */
export type AuthedResponse =
  | Extract<LimsResponse, { kind: 'answer' | 'failure' }>
  | { kind: 'no-token'; reason: string; unreachable: boolean }
  | { kind: 'token-refused' };

/** Sends with a bearer token; on 401 fetches a fresh token once and resends. Never throws for I/O. */
export async function authedExchange(deps: AuthedDeps, signal: AbortSignal, req: AuthedRequest): Promise<AuthedResponse> {
  let tok = await deps.tokens.token();
  for (let attempt = 0; ; attempt++) {
    if (!tok.ok) return { kind: 'no-token', reason: tok.reason, unreachable: tok.unreachable === true };
    const res = await exchange(deps.dispatcher, {
      ...req,
      origin: deps.origin,
      headers: { ...req.headers, authorization: `Bearer ${tok.token}` },
      headersTimeoutMs: deps.headersTimeoutMs,
      bodyTimeoutMs: deps.bodyTimeoutMs,
      signal,
    });
    if (res.kind === 'answer') deps.heard?.(res.status);
    if (res.kind !== 'answer' || res.status !== 401) return res;
    if (attempt > 0) return { kind: 'token-refused' };
    tok = await deps.tokens.refresh(tok.token);
  }
}
