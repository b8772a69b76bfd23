// The configuration pages on the status page's server and guard: GET /configure and its forms (anyone with a session
// may look), and the POSTs that change something (an unlocked session, its CSRF token, this origin): unlock and lock,
// preview, apply, reprocess. A change is checked whole before it is shown and again before it is applied; the apply is
// refused when the file moved on since the form was made, and nothing is then written.
import { send, type Route } from '../server.js';
import { redirect } from '../status/actions.js';
import { readForm } from '../status/form.js';
import { paths } from '../status/paths.js';
import { changeRoutes } from './change-routes.js';
import { addPage, mappingPage, mappingPages, settingsPage } from './render-forms.js';
import { overviewPage } from './render-overview.js';
import { configPage, unlockForm, type ConfigPageContext } from './render-parts.js';
import { pageContext, type ConfigRouteContext } from './context.js';
import type { ConfigState, InstrumentEntry } from './source.js';

const HTML = 'text/html; charset=utf-8';

const empty = { get: () => undefined, problems: [] };

function formRoute(c: ConfigRouteContext, path: string, render: (url: URL, ctx: ConfigPageContext) => Promise<string | { missing: string }>): Route {
  return {
    method: 'GET',
    path,
    handler: async (req, res, url) => {
      const page = pageContext(c, req, res);
      if (!page) return;
      const state = await c.source.state();
      if (!page.ctx.admin) {
        const ctx = { ...page.ctx, next: `${url.pathname}${url.search}` };
        return send(res, 403, HTML, overviewPage(state, ctx, c.now(), { text: 'Unlock changes first.', ok: false }));
      }
      const body = await render(url, page.ctx);
      if (typeof body === 'string') return send(res, 200, HTML, body);
      send(res, 404, HTML, overviewPage(state, page.ctx, c.now(), { text: body.missing, ok: false }));
    },
  };
}

function unlockRoutes(c: ConfigRouteContext): Route[] {
  const unlock: Route = {
    method: 'POST',
    path: paths.configureUnlock,
    handler: async (req, res) => {
      const form = await readForm(req);
      const refused = c.auth.refuseAction(req, form?.get('csrf') ?? null);
      if (refused !== null) return c.auth.refusal(res, refused);
      const page = pageContext(c, req, res)!;
      const outcome = c.auth.admin.unlock(page.session, form?.get('token') ?? '', form?.get('name') ?? '', res, req.socket.remoteAddress);
      c.log?.info({ outcome }, 'configuration unlock');
      const next = form?.get('next') ?? '';
      // Back to the configuration page that asked for the unlock; nothing but one of those.
      const back = /^\/configure(\/[a-z]+)?(\?[\w.=&%+-]*)?$/.test(next) ? next : paths.configure;
      if (outcome === 'ok') return redirect(res, back);
      const [status, problem] = UNLOCK_REFUSALS[outcome];
      send(res, status, HTML, configPage(page.ctx, 'Unlock', unlockForm({ ...page.ctx, next: back }, problem)));
    },
  };
  const lock: Route = {
    method: 'POST',
    path: paths.configureLock,
    handler: async (req, res) => {
      const form = await readForm(req);
      const refused = c.auth.refuseAction(req, form?.get('csrf') ?? null);
      if (refused !== null) return c.auth.refusal(res, refused);
      c.auth.admin.lock(res);
      redirect(res, paths.configure);
    },
  };
  return [unlock, lock];
}

const UNLOCK_REFUSALS: Record<'wrong' | 'throttled' | 'unavailable' | 'name', [number, string]> = {
  wrong: [401, 'That admin token is not right.'],
  throttled: [429, 'Too many wrong tokens; wait a minute and try again.'],
  unavailable: [403, 'Changing the configuration from this page is off.'],
  name: [422, "Enter your name: letters, digits, spaces, . ' or -, up to 40 characters."],
};

/** Every route of the configuration pages. */
export function configRoutes(c: ConfigRouteContext): Route[] {
  const overview: Route = {
    method: 'GET',
    path: paths.configure,
    handler: async (req, res) => {
      const page = pageContext(c, req, res);
      if (page) send(res, 200, HTML, overviewPage(await c.source.state(), page.ctx, c.now()));
    },
  };
  const entry = async (url: URL): Promise<{ s: ConfigState; found: InstrumentEntry } | { missing: string }> => {
    const s = await c.source.state();
    const id = url.searchParams.get('id') ?? '';
    const found = s.instruments.find((i) => i.config.id === id);
    if (!found) return { missing: `There is no instrument '${id}' (any more).` };
    return found.managed ? { s, found } : { missing: `${id} is configured in ${s.mainFile}, which only IT changes; change it there.` };
  };
  return [
    overview,
    formRoute(c, paths.configureAdd, async (url, ctx) => {
      const s = await c.source.state();
      if (url.searchParams.get('kind') === 'tcp') return addPage(s, ctx, null, empty);
      const port = s.newPorts.find((p) => p.path === url.searchParams.get('port') && p.found);
      return port ? addPage(s, ctx, port, empty) : { missing: 'That port is not heard, or its settings not found, any more.' };
    }),
    formRoute(c, paths.configureInstrument, async (url, ctx) => {
      const e = await entry(url);
      return 'missing' in e ? e : settingsPage(e.s, ctx, e.found, empty);
    }),
    formRoute(c, paths.configureMapping, async (url, ctx) => {
      const e = await entry(url);
      if ('missing' in e) return e;
      const codes = await c.source.codesOf(e.found.config.id);
      const page = url.searchParams.getAll('page');
      const n = page.length === 0 ? 1 : page.length === 1 && /^[1-9][0-9]{0,5}$/.test(page[0]!) ? Number(page[0]) : 0;
      const pages = mappingPages(e.found, codes);
      if (n < 1 || n > pages) return { missing: `There is no such page of ${e.found.config.id}'s codes (it has ${pages}).` };
      return mappingPage(e.s, ctx, e.found, codes, empty, n);
    }),
    ...unlockRoutes(c),
    ...changeRoutes(c),
  ];
}
