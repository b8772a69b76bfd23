// One HTTP exchange with the LIMS over an injected undici Dispatcher; every failure comes back as a value. Every
// upstream exchange (LIMS results, orders, dispatches and tokens; the FHIR server) goes through here, so every
// answer is read through the one capped reader.
import type { Dispatcher } from 'undici';
import { readAnswerBody } from './answer-body.js';

/** A request to send; `origin` is scheme://host:port. */
export interface LimsRequest {
  origin: string;
  path: string;
  method: 'GET' | 'PUT' | 'POST';
  headers: Record<string, string>;
  body?: string;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Bytes of the answer read at most; past them the exchange fails with 'too-large'. */
  maxAnswerBytes: number;
  /** Told of each answer cut at the cap (a counter). */
  overCap?: () => void;
  signal: AbortSignal;
}

/** Why there was no answer: no connection, no answer in time, the connection lost, the caller's abort, an answer over the cap. */
export type ExchangeFailure = 'connect' | 'timeout' | 'lost' | 'aborted' | 'too-large';

/** The answer, or why there was none. */
export type LimsResponse =
  | { kind: 'answer'; status: number; headers: Record<string, string | undefined>; body: string }
  | { kind: 'failure'; failure: ExchangeFailure; message: string };

// A failed TLS handshake is a connect failure too: no byte of the request reached the LIMS.
const connectCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

/** Sends one request; never throws for I/O. */
export async function exchange(dispatcher: Dispatcher, req: LimsRequest): Promise<LimsResponse> {
  try {
    const res = await dispatcher.request({
      origin: req.origin,
      path: req.path,
      method: req.method,
      headers: req.headers,
      body: req.body ?? null,
      headersTimeout: req.headersTimeoutMs,
      bodyTimeout: req.bodyTimeoutMs,
      signal: req.signal,
    });
    const headers = flatten(res.headers);
    const body = await readAnswerBody(res.body, headers['content-length'], req.maxAnswerBytes);
    if (body.kind === 'body') return { kind: 'answer', status: res.statusCode, headers, body: body.text };
    req.overCap?.();
    return { kind: 'failure', failure: 'too-large', message: `HTTP ${res.statusCode} answer over ${body.maxBytes} bytes: stopped reading` };
  } catch (err) {
    return { kind: 'failure', failure: failureOf(err, req.signal), message: describe(err) };
  }
}

function failureOf(err: unknown, signal: AbortSignal): Exclude<ExchangeFailure, 'too-large'> {
  if (signal.aborted) return 'aborted';
  const code = codeOf(err);
  if (connectCodes.has(code)) return 'connect';
  if (timeoutCodes.has(code)) return 'timeout';
  // Reset, "other side closed", a half-read body: the request may have reached the LIMS.
  return 'lost';
}

function codeOf(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : '';
}

/** A short, secret-free description: error code and message only (never headers or bodies). */
function describe(err: unknown): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return code ? `${code}: ${message}` : message;
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
