// The POST routes of the work queues. Each checks origin and CSRF, calls the source with the session's actor
// (the source audits it with the time), remembers the outcome for the next page view, and redirects back
// (303, so a reload does not post again).
import type { ServerResponse } from 'node:http';
import type { Log } from '../../log.js';
import { send, type Route } from '../server.js';
import type { StatusAuth } from './auth.js';
import { readForm } from './form.js';
import type { FlashMessages, SnapshotCache } from './page-state.js';
import { paths } from './paths.js';
import type { ActionOutcome, MaybePromise, StatusSource } from './source.js';

/** What the action routes share. */
export interface ActionContext {
  source: StatusSource;
  auth: StatusAuth;
  flashes: FlashMessages;
  snapshots: SnapshotCache;
  log?: Log;
}

type Perform = (form: URLSearchParams, actor: string) => MaybePromise<ActionOutcome> | null;

/** A 303 to `location`. */
export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0 });
  res.end();
}

function positiveId(text: string | null): number | null {
  return text !== null && /^[1-9]\d{0,15}$/.test(text) ? Number(text) : null;
}

function actionRoute(path: string, anchor: string, ctx: ActionContext, perform: Perform): Route {
  return {
    method: 'POST',
    path,
    handler: async (req, res) => {
      const form = await readForm(req);
      if (form === null) return send(res, 400, 'text/plain; charset=utf-8', 'expected a small urlencoded form\n');
      const refused = ctx.auth.refuseAction(req, form.get('csrf'));
      if (refused !== null) return ctx.auth.refusal(res, refused);
      const session = ctx.auth.session(req)!;
      const actor = ctx.auth.actor(session);
      let outcome: ActionOutcome;
      try {
        const pending = perform(form, actor);
        if (pending === null) return send(res, 400, 'text/plain; charset=utf-8', 'the form is missing a field\n');
        outcome = await pending;
      } catch (err) {
        ctx.log?.error({ err, path, actor }, 'status page action failed');
        outcome = { kind: 'failed', message: `Not done: ${(err as Error).message}` };
      }
      ctx.log?.info({ path, actor, outcome: outcome.kind }, 'status page action');
      ctx.flashes.set(session.id, { text: outcome.message, ok: outcome.kind === 'done' });
      ctx.snapshots.invalidate();
      redirect(res, `${paths.page}#${anchor}`);
    },
  };
}

/** POST routes: retry dead letters, resolve a conflict, reprocess a rejected capture. */
export function actionRoutes(ctx: ActionContext): Route[] {
  return [
    actionRoute(paths.retryDeadLetter, 'dead-letters', ctx, (form, actor) => {
      const sink = form.get('sink');
      const key = form.get('key');
      if (!sink || (key === null && form.get('all') !== '1')) return null;
      return ctx.source.retryDeadLetter(sink, key === null ? 'all' : { key }, actor);
    }),
    actionRoute(paths.resolveConflict, 'conflicts', ctx, (form, actor) => {
      const id = positiveId(form.get('id'));
      const choice = form.get('choice');
      if (id === null || (choice !== 'keep' && choice !== 'forward')) return null;
      return ctx.source.resolveConflict(id, choice, actor);
    }),
    actionRoute(paths.reprocessCapture, 'rejected', ctx, (form, actor) => {
      const id = positiveId(form.get('id'));
      return id === null ? null : ctx.source.reprocessCapture(id, actor);
    }),
  ];
}
