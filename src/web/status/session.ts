// Browser sessions without server state: the cookie carries a random id, when it was issued, and an HMAC over
// both. On a token-protected listener the HMAC key is derived from the token, so sessions survive a restart
// (a technician logs in once per browser) and rotating the token file logs every browser out. The raw token
// never leaves the server: neither the cookie nor the page contains it or anything it can be recovered from.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A verified browser session. */
export interface Session {
  /** Random, base64url; never shown (the actor carries only a short hash of it). */
  id: string;
  issuedAt: number;
  /** The synchronizer token every action form carries (derived from the id, so nothing is stored). */
  csrf: string;
}

const VERSION = 'v1';

/** Constant-time string equality; hashing first makes the comparison independent of the lengths too. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Eight hex digits naming a session in the audit log without revealing it. */
export function sessionHash(id: string): string {
  return createHash('sha256').update(`labgate-actor:${id}`).digest('hex').slice(0, 8);
}

/** Issues and verifies session cookie values and their CSRF tokens under one key. */
export class SessionKeys {
  private constructor(private readonly key: Buffer) {}

  /** Keys derived from the listener's token. */
  static fromToken(token: string): SessionKeys {
    return new SessionKeys(createHmac('sha256', token).update('labgate status page session key v1').digest());
  }

  /** A fresh key for this process (loopback listeners have no token; their sessions only carry CSRF). */
  static ephemeral(): SessionKeys {
    return new SessionKeys(randomBytes(32));
  }

  /** A new session and the cookie value that proves it. */
  issue(now: number): { value: string; session: Session } {
    const id = randomBytes(18).toString('base64url');
    const issued = now.toString(36);
    const value = `${VERSION}.${id}.${issued}.${this.mac(`${VERSION}.${id}.${issued}`)}`;
    return { value, session: { id, issuedAt: now, csrf: this.csrfFor(id) } };
  }

  /** The session a cookie value proves, or undefined when it is forged, malformed, from another key or too old. */
  verify(value: string, now: number, maxAgeMs: number): Session | undefined {
    const parts = value.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) return undefined;
    const [, id = '', issued = '', mac = ''] = parts;
    if (!safeEqual(mac, this.mac(`${VERSION}.${id}.${issued}`))) return undefined;
    const issuedAt = parseInt(issued, 36);
    if (!Number.isFinite(issuedAt) || issuedAt > now + 60_000 || now - issuedAt > maxAgeMs) return undefined;
    return { id, issuedAt, csrf: this.csrfFor(id) };
  }

  private csrfFor(id: string): string {
    return this.mac(`csrf.${id}`);
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}
