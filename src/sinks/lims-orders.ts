// The LIMS's orders, read for an analyzer: `GET {ordersPath}?accession=A&instrument=ID` for a query, and
// `GET {ordersPath}?instrument=ID&status=pending` for download mode; same auth as results (one shared token
// provider). Its own connection pool: a lookup an analyzer waits for never queues behind result deliveries. Every
// outcome is a value (lookups never throw), and nothing of a body (patient data) reaches a log line or a reason.
import { readFileSync } from 'node:fs';
import { Agent, type Dispatcher } from 'undici';
import type { Lookup } from '../orders/answer.js';
import { parseSpecimenOrders, parseWorklist, type Parsed } from '../orders/order.js';
import { DEFAULT_MAX_ANSWER_BYTES } from './answer-body.js';
import { authedExchange, type AuthedDeps, type AuthedResponse } from './authed-exchange.js';
import type { TokenProvider } from './lims-token.js';

/** Where the orders are (the `lims` section of the configuration). */
export interface LimsOrdersOptions {
  baseUrl: string;
  /** e.g. `/orders`; queries and dispatches hang off it. */
  ordersPath: string;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number };
  caFile?: string;
  /** Bytes of an answer read at most; DEFAULT_MAX_ANSWER_BYTES when unset. */
  maxAnswerBytes?: number;
}

/** Lookups an answer or a download is made from. */
export interface OrdersClient {
  /** One specimen's orders for the instrument (404 or an empty list: none). */
  specimen(accession: string, instrumentId: string, signal: AbortSignal): Promise<Lookup>;
  /** The instrument's pending worklist. */
  worklist(instrumentId: string, signal: AbortSignal): Promise<Lookup>;
  close(): Promise<void>;
}

/** The parts the orders client and the dispatch sink share: a pool, the token, and where the orders are. */
export interface OrdersEndpoint extends AuthedDeps {
  /** The path of `ordersPath` under the base URL, without a trailing slash. */
  base: string;
  close(): Promise<void>;
}

/** Opens an endpoint with its own keep-alive pool of `connections` (unless a dispatcher is injected). */
export function ordersEndpoint(options: LimsOrdersOptions, tokens: TokenProvider, connections: number, dispatcher?: Dispatcher): OrdersEndpoint {
  const owned = dispatcher
    ? undefined
    : new Agent({
        connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connect: { timeout: options.timeouts.connectMs, ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}) },
      });
  const url = new URL(options.baseUrl);
  return {
    dispatcher: dispatcher ?? owned!,
    tokens,
    origin: url.origin,
    base: `${url.pathname.replace(/\/$/, '')}${options.ordersPath.replace(/\/$/, '')}`,
    headersTimeoutMs: options.timeouts.headersMs,
    bodyTimeoutMs: options.timeouts.bodyMs,
    maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
    close: async () => {
      await owned?.close();
    },
  };
}

/** The orders client over an endpoint. */
export function createOrdersClient(endpoint: OrdersEndpoint): OrdersClient {
  const get = async (query: URLSearchParams, signal: AbortSignal, read: (body: unknown) => Parsed<Lookup>): Promise<Lookup> => {
    const res = await authedExchange(endpoint, signal, {
      method: 'GET',
      path: `${endpoint.base}?${query.toString()}`,
      headers: { accept: 'application/json' },
    });
    return lookupOf(res, read);
  };
  return {
    specimen: (accession, instrumentId, signal) =>
      get(new URLSearchParams({ accession, instrument: instrumentId }), signal, (body) => {
        const r = parseSpecimenOrders(body);
        return r.ok ? { ok: true, value: { kind: 'specimens', specimens: [r.value] } } : r;
      }),
    worklist: (instrumentId, signal) =>
      get(new URLSearchParams({ instrument: instrumentId, status: 'pending' }), signal, (body) => {
        const r = parseWorklist(body);
        return r.ok ? { ok: true, value: { kind: 'specimens', specimens: r.value } } : r;
      }),
    close: () => endpoint.close(),
  };
}

/**
 * An exchange read as a lookup: 200 with a well-formed body, 404 (no orders), or why not. Down (no connection, 503,
 * no token for want of one) and slow (no answer before the deadline) are told apart from an error, for the status page.
 */
export function lookupOf(res: AuthedResponse, read: (body: unknown) => Parsed<Lookup>): Lookup {
  if (res.kind === 'no-token') return { kind: 'failed', reason: res.unreachable ? 'lims-unavailable' : 'lims-error', detail: 'no token' };
  if (res.kind === 'token-refused') return { kind: 'failed', reason: 'lims-error', detail: 'a fresh token refused' };
  if (res.kind === 'failure') {
    const reason = res.failure === 'timeout' || res.failure === 'aborted' ? 'lims-timeout' : res.failure === 'connect' ? 'lims-unavailable' : 'lims-error';
    return { kind: 'failed', reason, detail: res.failure === 'too-large' ? 'orders answer over the size cap (sinks.lims.maxAnswerBytes)' : res.failure };
  }
  if (res.status === 404) return { kind: 'specimens', specimens: [] };
  if (res.status !== 200) return { kind: 'failed', reason: res.status === 503 ? 'lims-unavailable' : 'lims-error', detail: `HTTP ${res.status}` };
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return { kind: 'failed', reason: 'lims-error', detail: 'orders answer is not JSON' };
  }
  const r = read(body);
  return r.ok ? r.value : { kind: 'failed', reason: 'lims-error', detail: r.reason };
}
