// The status page on the gateway's one WebServer: GET / (the page), GET /fragment (what the script polls, with
// an ETag so an unchanged page costs a 304), GET /status.json, the two assets, login/logout, and the actions.
// The guard must be the WebServer's guard: it protects these routes and /healthz and /metrics. Wiring:
//   const page = statusPage(gatewayStatusSource({...}), { requireToken: !isLoopbackHost(http.host), token, now });
//   new WebServer({ host, port, log, guard: page.guard, routes: [...page.routes, healthRoute(...), metricsRoute(...)] });
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Log } from '../../log.js';
import { send, type RequestGuard, type Route } from '../server.js';
import { actionRoutes, redirect } from './actions.js';
import { StatusAuth, type StatusAuthOptions } from './auth.js';
import { clientScript } from './client.js';
import { readForm } from './form.js';
import { FlashMessages, SnapshotCache } from './page-state.js';
import { paths } from './paths.js';
import { loginPage } from './layout.js';
import { liveFragment, statusPage as renderPage } from './render-page.js';
import { codesMissingDocument, codesPageDocument } from './render-codes-page.js';
import { instrumentIdPattern } from '../../config/schema.js';
import type { StatusSnapshot, StatusSource } from './source.js';
import { styleSheet } from './style.js';
import type { Session } from './session.js';

/** Options of statusRoutes. */
export interface StatusRoutesOptions {
  auth: StatusAuth;
  now: () => number;
  /** A clock that never steps, for how long a snapshot is shared (a wall clock stepped back would freeze the page); default `now`. */
  monotonic?: () => number;
  /** How long one snapshot serves every browser (the script polls every 2 s). Default 2000 ms. */
  snapshotCacheMs?: number;
  log?: Log;
}

const HTML = 'text/html; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

// Everything but the clock: two snapshots that differ only in `now` render the same apart from relative times,
// which the client script advances itself.
function etagOf(s: StatusSnapshot): string {
  return `"${createHash('sha256')
    .update(JSON.stringify({ ...s, now: 0 }))
    .digest('base64url')
    .slice(0, 22)}"`;
}

function withSession(auth: StatusAuth, handler: (req: IncomingMessage, res: ServerResponse, session: Session, url: URL) => Promise<void>): Route['handler'] {
  return async (req, res, url) => {
    const session = auth.session(req, res);
    // Only reachable when the guard was not installed: refuse rather than serve.
    if (session === undefined) return send(res, 401, HTML, loginPage(null));
    await handler(req, res, session, url);
  };
}

// `?instrument=ID&page=N`: one of each at most, an id as the configuration allows one, a page from 1 (default 1).
function codesQuery(url: URL): { instrumentId: string; page: number } | null {
  const ids = url.searchParams.getAll('instrument');
  const pages = url.searchParams.getAll('page');
  if (ids.length !== 1 || pages.length > 1 || !instrumentIdPattern.test(ids[0]!)) return null;
  if (pages.length === 1 && !/^[1-9][0-9]{0,5}$/.test(pages[0]!)) return null;
  return { instrumentId: ids[0]!, page: pages.length ? Number(pages[0]) : 1 };
}

const CODES_QUERY = 'expected ?instrument=ID&page=N: one configured instrument id, and a page number from 1';

// A page of an instrument's codes past the first, as a page or as JSON; a query that is not one is refused (400), an
// instrument or page that does not exist is not found (404).
function codesRoutes(source: StatusSource, auth: StatusAuth): Route[] {
  const JSON_TYPE = 'application/json; charset=utf-8';
  const answer = (json: boolean) =>
    withSession(auth, async (_req, res, _session, url) => {
      const query = codesQuery(url);
      if (query === null) return json ? send(res, 400, JSON_TYPE, JSON.stringify({ error: CODES_QUERY }) + '\n') : send(res, 400, TEXT, `${CODES_QUERY}\n`);
      const outcome = await source.codes(query.instrumentId, query.page);
      if (outcome.kind === 'not-found') {
        return json
          ? send(res, 404, JSON_TYPE, JSON.stringify({ error: outcome.message }) + '\n')
          : send(res, 404, HTML, codesMissingDocument(outcome.message));
      }
      if (json) return send(res, 200, JSON_TYPE, JSON.stringify(outcome.codes) + '\n');
      send(res, 200, HTML, codesPageDocument(outcome));
    });
  return [
    { method: 'GET', path: paths.codes, handler: answer(false) },
    { method: 'GET', path: paths.codesJson, handler: answer(true) },
  ];
}

function loginRoutes(auth: StatusAuth): Route[] {
  const home = (res: ServerResponse): void => redirect(res, paths.page);
  return [
    { method: 'GET', path: paths.login, handler: (req, res) => (!auth.requireToken || auth.session(req) ? home(res) : send(res, 200, HTML, loginPage(null))) },
    {
      method: 'POST',
      path: paths.login,
      handler: async (req, res) => {
        const form = await readForm(req);
        if (!auth.sameOrigin(req)) return auth.refusal(res, 'This request came from another site, so it was refused.');
        if (!auth.requireToken) return home(res);
        const outcome = form ? auth.login(form.get('token') ?? '', res, req.socket.remoteAddress) : 'wrong';
        if (outcome === 'ok') return home(res);
        if (outcome === 'throttled') return send(res, 429, HTML, loginPage('Too many wrong tokens; wait a minute and try again.'));
        send(res, 401, HTML, loginPage('That token is not right.'));
      },
    },
    {
      method: 'POST',
      path: paths.logout,
      handler: async (req, res) => {
        const form = await readForm(req);
        const refused = auth.refuseAction(req, form?.get('csrf') ?? null);
        if (refused !== null) return auth.refusal(res, refused);
        auth.logout(req, res);
        redirect(res, auth.requireToken ? paths.login : paths.page);
      },
    },
  ];
}

/** Every route of the status page. */
export function statusRoutes(source: StatusSource, options: StatusRoutesOptions): Route[] {
  const { auth } = options;
  const snapshots = new SnapshotCache(source, options.monotonic ?? options.now, options.snapshotCacheMs ?? 2000);
  const flashes = new FlashMessages();
  const page = withSession(auth, async (_req, res, session) => {
    const snapshot = await snapshots.get();
    const flash = flashes.take(session.id);
    send(res, 200, HTML, renderPage(snapshot, { csrf: session.csrf, flash, loggedIn: auth.requireToken }));
  });
  const fragment = withSession(auth, async (req, res, session) => {
    const snapshot = await snapshots.get();
    const etag = etagOf(snapshot);
    res.setHeader('x-labgate-now', String(snapshot.now));
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag, 'cache-control': 'no-store' });
      return void res.end();
    }
    res.setHeader('etag', etag);
    send(res, 200, HTML, liveFragment(snapshot, session.csrf).value);
  });
  const json = withSession(auth, async (_req, res) => {
    send(res, 200, 'application/json; charset=utf-8', JSON.stringify(await snapshots.get()) + '\n');
  });
  return [
    { method: 'GET', path: paths.page, handler: page },
    { method: 'GET', path: paths.fragment, handler: fragment },
    { method: 'GET', path: paths.json, handler: json },
    { method: 'GET', path: paths.css, handler: (_req, res) => send(res, 200, 'text/css; charset=utf-8', styleSheet) },
    { method: 'GET', path: paths.js, handler: (_req, res) => send(res, 200, 'text/javascript; charset=utf-8', clientScript) },
    ...codesRoutes(source, auth),
    ...loginRoutes(auth),
    ...actionRoutes({ source, auth, flashes, snapshots, ...(options.log ? { log: options.log } : {}) }),
  ];
}

/** Options of statusPage: the guard's and the routes' together. */
export type StatusPageOptions = StatusAuthOptions & Omit<StatusRoutesOptions, 'auth'>;

/** The routes and the guard that belongs to them; pass `guard` to `new WebServer({guard})`. */
export function statusPage(source: StatusSource, options: StatusPageOptions): { routes: Route[]; guard: RequestGuard; auth: StatusAuth } {
  const auth = new StatusAuth(options);
  return { routes: statusRoutes(source, { ...options, auth }), guard: auth.guard, auth };
}
