// The page's second level: changing the configuration. Looking (and the work queues' actions) needs a session; changing
// the configuration needs that session unlocked with the admin token (gateway.http.adminTokenFile), on a loopback
// listener too, so a touchscreen at the bench shows everything and changes nothing until someone types the admin token.
// The unlock is a second cookie bound to the session (its HMAC covers the session id) and keyed by the admin token: a
// logout, a new view token or a new admin token ends it, and it lasts a shift. The person unlocking names themself, and
// the audit log carries that name beside the session's hash (the token is shared; the name is who said they were).
import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoginLimiter } from './login-limiter.js';
import { safeEqual, sessionHash, type Session } from './session.js';

/** An unlocked session's person. */
export interface Admin {
  name: string;
}

export interface AdminRightsOptions {
  /** The admin token (gateway.http.adminTokenFile, trimmed), asked on every check; undefined: nobody may change. */
  adminToken?: () => string | undefined;
  /** The view token, which the admin token must not equal. */
  viewToken: () => string | undefined;
  now: () => number;
  secureCookie?: boolean;
  /** Shared with the login, so guessing either token counts against one budget per address. */
  limiter: LoginLimiter;
}

const COOKIE = 'labgate_admin';
/** An unlock lasts a shift. */
export const ADMIN_MAX_AGE_MS = 8 * 3_600_000;
const MIN_LENGTH = 16;
const NAME = /^[\p{L}\p{N}][\p{L}\p{N} .'-]{0,39}$/u;

/** Why a person cannot unlock now, in their words; null when they can. */
export type AdminAvailability = null | string;

/** Unlocking, checking and locking the right to change the configuration. */
export class AdminRights {
  constructor(private readonly o: AdminRightsOptions) {}

  /** Null when an admin token is configured and usable; otherwise what the administrator has to do. */
  unavailable(): AdminAvailability {
    const token = this.o.adminToken?.();
    if (token === undefined || token === '')
      return 'Changing the configuration from this page is off: set gateway.http.adminTokenFile (docs/operating.md, "Who may change the configuration").';
    if (token.length < MIN_LENGTH) return `The admin token is shorter than ${MIN_LENGTH} characters, so changing the configuration is off.`;
    const view = this.o.viewToken();
    if (view !== undefined && safeEqual(view, token))
      return 'The admin token is the same as the view token, so changing the configuration is off: give it its own.';
    return null;
  }

  /** The person who unlocked this session, or undefined. */
  of(req: IncomingMessage, session: Session): Admin | undefined {
    const key = this.key();
    const value = cookieValue(req, COOKIE);
    if (!key || value === undefined) return undefined;
    const [version, name64 = '', issued = '', mac = ''] = value.split('.');
    if (version !== 'v1' || !safeEqual(mac, sign(key, session.id, name64, issued))) return undefined;
    const issuedAt = parseInt(issued, 36);
    const now = this.o.now();
    if (!Number.isFinite(issuedAt) || issuedAt > now + 60_000 || now - issuedAt > ADMIN_MAX_AGE_MS) return undefined;
    return { name: Buffer.from(name64, 'base64url').toString('utf8') };
  }

  /** Checks the admin token typed by `name`; on success sets the unlock cookie. Throttled per address with the login. */
  unlock(session: Session, token: string, name: string, res: ServerResponse, address = '?'): 'ok' | 'wrong' | 'throttled' | 'unavailable' | 'name' {
    const now = this.o.now();
    if (this.unavailable() !== null) return 'unavailable';
    if (!NAME.test(name.trim())) return 'name';
    if (this.o.limiter.throttled(address, now)) return 'throttled';
    const key = this.key();
    if (!key || !safeEqual(token.trim(), this.o.adminToken!()!)) {
      this.o.limiter.failed(address, now);
      return 'wrong';
    }
    const name64 = Buffer.from(name.trim(), 'utf8').toString('base64url');
    const issued = now.toString(36);
    const value = `v1.${name64}.${issued}.${sign(key, session.id, name64, issued)}`;
    res.setHeader('set-cookie', `${COOKIE}=${value}; ${this.attributes(Math.floor(ADMIN_MAX_AGE_MS / 1000))}`);
    return 'ok';
  }

  /** Ends the unlock (the session itself stays). */
  lock(res: ServerResponse): void {
    res.setHeader('set-cookie', `${COOKIE}=; ${this.attributes(0)}`);
  }

  /** Who the audit log names for an unlocked session. */
  actor(session: Session, admin: Admin): string {
    return `admin:${admin.name} (session ${sessionHash(session.id)})`;
  }

  private attributes(maxAge: number): string {
    return `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${this.o.secureCookie ? '; Secure' : ''}`;
  }

  // Follows the admin token: a new one ends every unlock of the old.
  private key(): Buffer | undefined {
    if (this.unavailable() !== null) return undefined;
    return createHmac('sha256', this.o.adminToken!()!).update('labgate admin unlock key v1').digest();
  }
}

function sign(key: Buffer, sessionId: string, name64: string, issued: string): string {
  return createHmac('sha256', key).update(`admin.v1.${sessionId}.${name64}.${issued}`).digest('base64url');
}

/** A cookie's value from the request's Cookie header. */
export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
