// Who may see the page and act on it. A listener on a non-loopback address (`requireToken`) serves nothing but
// the login form and the stylesheet to a browser without a session: pages, JSON, actions, /healthz and /metrics
// all need the session cookie (or, for GETs by scripts and scrapers, `Authorization: Bearer <token>`).
// A loopback listener needs no token, but it only answers requests addressed to a loopback name (a DNS-rebinding
// page on another site could otherwise read it and post actions), and actions still need the CSRF token.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost } from '../../config/loopback.js';
import { send, type RequestGuard } from '../server.js';
import { AdminRights, cookieValue } from './admin-rights.js';
import { paths } from './paths.js';
import { loginPage, refusalPage } from './layout.js';
import { LoginLimiter } from './login-limiter.js';
import { MemoryRevokedSessions, type RevokedSessions } from './revoked-sessions.js';
import { SessionKeys, safeEqual, sessionHash, type Session } from './session.js';

export { isLoopbackHost };

/** How the guard decides. */
export interface StatusAuthOptions {
  /** True when the listener is not on loopback (the runtime sets it with `isLoopbackHost(config.gateway.http.host)`). */
  requireToken: boolean;
  /** The contents of gateway.http.tokenFile, trimmed; required when requireToken. A function is asked on every
   *  check, so a rewritten token file takes effect at once (TokenFile.current); undefined then refuses everyone. */
  token?: string | (() => string | undefined);
  /** Where logged-out sessions are remembered until they expire. Default: memory (forgotten at restart). */
  revoked?: RevokedSessions;
  now: () => number;
  /** How long a login lasts. Default 30 days. */
  sessionMaxAgeMs?: number;
  /** Adds `Secure` to the cookie; set it when a TLS proxy fronts the gateway. */
  secureCookie?: boolean;
  /** Further Host names a loopback listener answers to (e.g. a reverse proxy's public name). */
  allowedHosts?: readonly string[];
  /** Further origins an action may come from (`https://gateway.lab` behind a TLS proxy that rewrites Host). */
  allowedOrigins?: readonly string[];
  /** The contents of gateway.http.adminTokenFile: the right to change the configuration (admin-rights.ts). */
  adminToken?: () => string | undefined;
}

const COOKIE = 'labgate_session';
/** A token shorter than this on a network-facing listener is a configuration error. */
export const MIN_TOKEN_LENGTH = 16;
const DAY_MS = 86_400_000;
const PUBLIC = new Set([`GET ${paths.login}`, `POST ${paths.login}`, `GET ${paths.css}`]);
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // Not no-referrer: Chromium then sends `Origin: null` on form posts, and the origin check needs the real one.
  'referrer-policy': 'same-origin',
};

/** The hostname of a Host header (`[::1]:8080` → `::1`). */
function hostnameOf(host: string | undefined): string {
  if (!host) return '';
  const bracketed = /^\[([^\]]+)\]/.exec(host);
  return (bracketed ? bracketed[1]! : host.replace(/:\d+$/, '')).toLowerCase();
}

/** The session check, the login, and the CSRF and origin checks of actions. */
export class StatusAuth {
  readonly requireToken: boolean;
  private readonly ephemeral = SessionKeys.ephemeral();
  private derived: { token: string; keys: SessionKeys } | undefined;
  private readonly maxAgeMs: number;
  private readonly sessions = new WeakMap<IncomingMessage, Session>();
  private readonly limiter = new LoginLimiter();
  private readonly revoked: RevokedSessions;
  /** The second level: unlocking a session to change the configuration. */
  readonly admin: AdminRights;

  constructor(private readonly options: StatusAuthOptions) {
    this.requireToken = options.requireToken;
    if (options.requireToken && (this.token() ?? '').length < MIN_TOKEN_LENGTH) {
      throw new RangeError(`a listener that is not on loopback needs gateway.http.tokenFile holding a token of at least ${MIN_TOKEN_LENGTH} characters`);
    }
    this.maxAgeMs = options.sessionMaxAgeMs ?? 30 * DAY_MS;
    this.revoked = options.revoked ?? new MemoryRevokedSessions();
    this.admin = new AdminRights({
      ...(options.adminToken ? { adminToken: options.adminToken } : {}),
      viewToken: () => this.token(),
      now: options.now,
      ...(options.secureCookie ? { secureCookie: true } : {}),
      limiter: this.limiter,
    });
  }

  /** The WebServer guard: security headers on every answer, then the host or token check. */
  readonly guard: RequestGuard = (req, res, url) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (!this.requireToken) {
      if (this.hostAllowed(req)) return true;
      send(res, 421, 'text/plain; charset=utf-8', 'this gateway answers only to localhost; use http://127.0.0.1\n');
      return false;
    }
    if (PUBLIC.has(`${req.method === 'HEAD' ? 'GET' : req.method} ${url.pathname}`)) return true;
    if (this.session(req) !== undefined || this.bearerAllowed(req)) return true;
    res.setHeader('www-authenticate', 'Bearer realm="labgate"');
    if (req.method === 'GET' && url.pathname === paths.page) send(res, 401, 'text/html; charset=utf-8', loginPage(null));
    else send(res, 401, 'text/plain; charset=utf-8', `log in at ${paths.login} first\n`);
    return false;
  };

  /** The request's verified session; on a loopback listener, a missing one is issued (with `res`) so forms get CSRF. */
  session(req: IncomingMessage, res?: ServerResponse): Session | undefined {
    const known = this.sessions.get(req);
    if (known) return known;
    const keys = this.keys();
    const value = cookieValue(req, COOKIE);
    const now = this.options.now();
    let session = value === undefined || !keys ? undefined : keys.verify(value, now, this.maxAgeMs);
    if (session && this.revoked.has(session.id, now)) session = undefined;
    if (session === undefined && res && !this.requireToken) session = this.issue(res);
    if (session) this.sessions.set(req, session);
    return session;
  }

  /** Who the audit log names for this session. */
  actor(session: Session): string {
    return this.requireToken ? `web:${sessionHash(session.id)}` : 'web-local';
  }

  /** Checks a submitted token from a client address; on success sets the session cookie. Throttled per address. */
  login(token: string, res: ServerResponse, address = '?'): 'ok' | 'wrong' | 'throttled' {
    const now = this.options.now();
    if (this.limiter.throttled(address, now)) return 'throttled';
    const expected = this.token();
    if (expected === undefined || !this.keys() || !safeEqual(token.trim(), expected)) {
      this.limiter.failed(address, now);
      return 'wrong';
    }
    this.issue(res);
    return 'ok';
  }

  /** Ends the request's session on the server too (a copy of the cookie no longer works), and clears the cookie. */
  logout(req: IncomingMessage, res: ServerResponse): void {
    const session = this.session(req);
    if (session) this.revoked.add(session.id, session.issuedAt + this.maxAgeMs, this.options.now());
    res.setHeader('set-cookie', `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${this.options.secureCookie ? '; Secure' : ''}`);
  }

  /** Null when an action may proceed; otherwise why not (stale or missing CSRF token, foreign origin). */
  refuseAction(req: IncomingMessage, csrf: string | null): string | null {
    if (!this.sameOrigin(req)) return 'This request came from another site, so it was refused.';
    const session = this.session(req);
    if (!session || csrf === null || !safeEqual(csrf, session.csrf)) {
      return 'The form was out of date (the gateway restarted or you logged out). Go back, reload, and try again.';
    }
    return null;
  }

  /** A browser POST names its origin; it must be this very host (a POST without Origin relies on the CSRF token). */
  sameOrigin(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined) return req.headers['sec-fetch-site'] !== 'cross-site';
    const host = req.headers.host;
    if (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`)) return true;
    return (this.options.allowedOrigins ?? []).includes(origin);
  }

  /** The refusal page for a failed check. */
  refusal(res: ServerResponse, message: string): void {
    send(res, 403, 'text/html; charset=utf-8', refusalPage(message));
  }

  private issue(res: ServerResponse): Session {
    const { value, session } = this.keys()!.issue(this.options.now());
    const maxAge = Math.floor(this.maxAgeMs / 1000);
    res.setHeader('set-cookie', `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${this.options.secureCookie ? '; Secure' : ''}`);
    return session;
  }

  private token(): string | undefined {
    const { token } = this.options;
    return typeof token === 'function' ? token() : token;
  }

  // Keys follow the token: a new token derives new keys, so every session of the old one ends. A protected listener
  // whose token went missing or too short has none, and refuses everyone.
  private keys(): SessionKeys | undefined {
    const token = this.token();
    if (token === undefined || token === '') return this.requireToken ? undefined : this.ephemeral;
    if (this.requireToken && token.length < MIN_TOKEN_LENGTH) return undefined;
    if (this.derived?.token !== token) this.derived = { token, keys: SessionKeys.fromToken(token) };
    return this.derived.keys;
  }

  private hostAllowed(req: IncomingMessage): boolean {
    const name = hostnameOf(req.headers.host);
    return isLoopbackHost(name) || (this.options.allowedHosts ?? []).some((h) => h.toLowerCase() === name);
  }

  private bearerAllowed(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const token = this.token();
    if (!header?.startsWith('Bearer ') || !token || !this.keys()) return false;
    return safeEqual(header.slice(7).trim(), token);
  }
}
