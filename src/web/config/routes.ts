// The configuration pages on the status page's server and guard: GET /configure and its forms (anyone with a session
// may look), and the POSTs that change something (an unlocked session, its CSRF token, this origin): unlock and lock,
// preview, apply, reprocess. A change is checked whole before it is shown and again before it is applied; the apply is
// refused when the file moved on since the form was made, and nothing is then written.
import { send, type Route } from '../server.js';
import { redirect } from '../status/actions.js';
import { readForm } from '../status/form.js';
import { paths } from '../status/paths.js';
import { changeRoutes } from './change-routes.js';
import { addPage, mappingPage, settingsPage } from './render-forms.js';
import { overviewPage } from './render-overview.js';
import { configPage, unlockForm, type ConfigPageContext } from './render-parts.js';
import { pageContext, type ConfigRouteContext } from './context.js';

const HTML = 'text/html; charset=utf-8';

const empty = { get: () => undefined, problems: [] };

function formRoute(c: ConfigRouteContext, path: string, render: (url: URL, ctx: ConfigPageContext) => Promise<string | null>): Route {
  return {
    method: 'GET',
    path,
    handler: async (req, res, url) => {
      const page = pageContext(c, req, res);
      if (!page) return;
      if (!page.ctx.admin) return send(res, 403, HTML, overviewPage(await c.source.state(), page.ctx, c.now(), { text: 'Unlock changes first.', ok: false }));
      const body = await render(url, page.ctx);
      if (body === null)
        return send(
          res,
          404,
          HTML,
          overviewPage(await c.source.state(), page.ctx, c.now(), { text: 'No such instrument or port here (any more).', ok: false }),
        );
      send(res, 200, HTML, body);
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
      if (outcome === 'ok') return redirect(res, paths.configure);
      const [status, problem] = UNLOCK_REFUSALS[outcome];
      send(res, status, HTML, configPage(page.ctx, 'Unlock', unlockForm(page.ctx, problem)));
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
  const entry = async (url: URL) => {
    const s = await c.source.state();
    const found = s.instruments.find((i) => i.config.id === url.searchParams.get('id') && i.managed);
    return found ? { s, found } : null;
  };
  return [
    overview,
    formRoute(c, paths.configureAdd, async (url, ctx) => {
      const s = await c.source.state();
      if (url.searchParams.get('kind') === 'tcp') return addPage(s, ctx, null, empty);
      const port = s.newPorts.find((p) => p.path === url.searchParams.get('port') && p.found);
      return port ? addPage(s, ctx, port, empty) : null;
    }),
    formRoute(c, paths.configureInstrument, async (url, ctx) => {
      const e = await entry(url);
      return e ? settingsPage(e.s, ctx, e.found, empty) : null;
    }),
    formRoute(c, paths.configureMapping, async (url, ctx) => {
      const e = await entry(url);
      return e ? mappingPage(e.s, ctx, e.found, await c.source.codesOf(e.found.config.id), empty) : null;
    }),
    ...unlockRoutes(c),
    ...changeRoutes(c),
  ];
}
