// What the configuration routes share, and the page context of a request (its session, whether it is unlocked).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Log } from '../../log.js';
import { send } from '../server.js';
import type { StatusAuth } from '../status/auth.js';
import type { Session } from '../status/session.js';
import type { ConfigPageContext } from './render-parts.js';
import type { ConfigSource } from './source.js';

const HTML = 'text/html; charset=utf-8';
/** Largest configuration form: a mapping of an instrument's 500 codes. */
export const MAX_CONFIG_FORM_BYTES = 128 * 1024;

/** What the configuration routes share. */
export interface ConfigRouteContext {
  source: ConfigSource;
  auth: StatusAuth;
  gatewayId: string;
  now: () => number;
  log?: Log;
}

/** The page context of a request, or null (answered) when it has no session. */
export function pageContext(c: ConfigRouteContext, req: IncomingMessage, res: ServerResponse): { ctx: ConfigPageContext; session: Session } | null {
  const session = c.auth.session(req, res);
  if (session === undefined) {
    send(res, 401, HTML, 'log in first\n');
    return null;
  }
  const admin = c.auth.admin.of(req, session) ?? null;
  return { session, ctx: { gatewayId: c.gatewayId, csrf: session.csrf, admin, unavailable: c.auth.admin.unavailable() } };
}
