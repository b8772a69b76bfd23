// The POSTs that change the configuration: preview (the change checked whole and shown as a diff with the reload's
// plan), apply (the same fields again: checked again, saved only over the version the form was made from, reloaded,
// audited) and reprocess. Each needs an unlocked session, its CSRF token and this origin; a refused form changes nothing
// and names every problem.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { lineDiff, unchanged } from '../../config/line-diff.js';
import { send, type Route } from '../server.js';
import { readForm } from '../status/form.js';
import { paths } from '../status/paths.js';
import type { Session } from '../status/session.js';
import { proposedText, readChange, type Change } from './changes.js';
import { formAgain, onFields } from './form-pages.js';
import { appliedPage, changedPage, previewPage, reprocessedPage } from './render-preview.js';
import type { ConfigPageContext } from './render-parts.js';
import { MAX_CONFIG_FORM_BYTES, pageContext, type ConfigRouteContext } from './context.js';
import type { ChangeRecord, ConfigState } from './source.js';

const HTML = 'text/html; charset=utf-8';

interface Posted {
  form: URLSearchParams;
  ctx: ConfigPageContext;
  session: Session;
  actor: string;
}

// The checks every changing POST makes before reading its fields: a small urlencoded body, this origin and the session's
// CSRF token, and an unlocked session.
async function posted(c: ConfigRouteContext, req: IncomingMessage, res: ServerResponse): Promise<Posted | null> {
  const form = await readForm(req, MAX_CONFIG_FORM_BYTES);
  if (form === null) {
    send(res, 400, 'text/plain; charset=utf-8', 'expected an urlencoded form of at most 128 KiB\n');
    return null;
  }
  const refused = c.auth.refuseAction(req, form.get('csrf'));
  if (refused !== null) {
    c.auth.refusal(res, refused);
    return null;
  }
  const page = pageContext(c, req, res)!;
  if (!page.ctx.admin) {
    c.auth.refusal(res, 'Changing the configuration needs the admin token: unlock changes on the Configure page first.');
    return null;
  }
  return { form, ctx: page.ctx, session: page.session, actor: c.auth.admin.actor(page.session, page.ctx.admin) };
}

type Made = { kind: 'made'; s: ConfigState; change: Change; text: string; record: ChangeRecord; plan: string } | { kind: 'answered' };

// From the form to a checked new text, or an answer: the form again with its problems, or the file changed meanwhile.
async function make(c: ConfigRouteContext, p: Posted, res: ServerResponse): Promise<Made> {
  const read = readChange(p.form);
  if (read === null) {
    send(res, 400, 'text/plain; charset=utf-8', 'the form is missing a field\n');
    return { kind: 'answered' };
  }
  const s = await c.source.state();
  const again = async (problems: Parameters<typeof formAgain>[4]): Promise<Made> => {
    c.log?.info({ actor: p.actor, change: p.form.get('change'), problems: problems.length }, 'configuration change refused');
    send(res, 422, HTML, await formAgain(c.source, s, p.ctx, p.form, problems, c.now()));
    return { kind: 'answered' };
  };
  if (read.kind === 'invalid') return again(read.problems);
  if (p.form.get('base') !== s.version) {
    const retry =
      p.form.get('change') === 'mapping' || p.form.get('change') === 'copy-mapping'
        ? `${paths.configureMapping}?id=${encodeURIComponent(p.form.get('id') ?? '')}`
        : paths.configure;
    // The newest audited change made the file as it is now, or the file was changed by hand since.
    const latest = s.changes[0]?.version === s.version ? s.changes[0] : null;
    send(res, 409, HTML, changedPage(p.ctx, latest, c.now(), retry));
    return { kind: 'answered' };
  }
  const made = await proposedText(read.change, s, (v) => c.source.past(v));
  if (made.kind === 'refused') return again([{ field: null, message: made.message }]);
  if (unchanged(lineDiff(s.text ?? '', made.text))) return again([{ field: null, message: 'This changes nothing: the configuration already says so.' }]);
  const check = await c.source.check(made.text);
  if (check.problems.length || check.plan === null) return again(onFields(check.problems, read.change, s));
  return { kind: 'made', s, change: read.change, text: made.text, record: made.record, plan: check.plan };
}

/** Preview, apply and reprocess. */
export function changeRoutes(c: ConfigRouteContext): Route[] {
  const preview: Route = {
    method: 'POST',
    path: paths.configurePreview,
    handler: async (req, res) => {
      const p = await posted(c, req, res);
      if (!p) return;
      const made = await make(c, p, res);
      if (made.kind === 'made') send(res, 200, HTML, previewPage(p.ctx, made.record.summary, made.plan, lineDiff(made.s.text ?? '', made.text), p.form));
    },
  };
  const apply: Route = {
    method: 'POST',
    path: paths.configureApply,
    handler: async (req, res) => {
      const p = await posted(c, req, res);
      if (!p) return;
      const made = await make(c, p, res);
      if (made.kind !== 'made') return;
      const outcome = await c.source.apply(made.text, made.s.version, p.actor, made.record);
      if (outcome.kind === 'changed')
        return send(res, 409, HTML, changedPage(p.ctx, outcome.latest?.version === outcome.version ? outcome.latest : null, c.now(), paths.configure));
      if (outcome.kind === 'invalid')
        return send(res, 422, HTML, await formAgain(c.source, made.s, p.ctx, p.form, onFields(outcome.problems, made.change, made.s), c.now()));
      const id = made.record.subject;
      const enabled = id !== null && made.change.kind !== 'service' && made.change.kind !== 'add';
      send(res, 200, HTML, appliedPage(p.ctx, made.record.summary, outcome.summary, { id, reprocessable: enabled ? await c.source.reprocessable(id) : null }));
    },
  };
  const reprocess: Route = {
    method: 'POST',
    path: paths.configureReprocess,
    handler: async (req, res) => {
      const p = await posted(c, req, res);
      if (!p) return;
      const id = (p.form.get('id') ?? '').trim();
      if (!id) return send(res, 400, 'text/plain; charset=utf-8', 'the form is missing a field\n');
      send(res, 200, HTML, reprocessedPage(p.ctx, id, await c.source.reprocess(id, p.actor)));
    },
  };
  return [preview, apply, reprocess];
}
