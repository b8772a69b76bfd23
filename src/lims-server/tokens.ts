// Bearer tokens the LIMS test server issues at /oauth/token (RFC 6749 4.4 client credentials) and checks.
import { randomBytes } from 'node:crypto';

/** A client allowed to ask for tokens. */
export interface LimsClient {
  clientId: string;
  clientSecret: string;
}

/** Issues and checks tokens; time is injected. */
export class TokenDesk {
  private readonly tokens = new Map<string, number>();
  private readonly everIssued: string[] = [];

  constructor(
    private readonly clients: readonly LimsClient[],
    private readonly now: () => number,
    private readonly staticTokens: readonly string[] = [],
  ) {}

  /** Handles a token request: form body and Authorization header; returns the HTTP status and JSON body. */
  grant(form: URLSearchParams, authorization: string | undefined, ttlSeconds: number, advertised: number): { status: number; body: object } {
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } };
    const [id, secret] = credentialsOf(form, authorization);
    if (!this.clients.some((c) => c.clientId === id && c.clientSecret === secret)) return { status: 401, body: { error: 'invalid_client' } };
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.now() + ttlSeconds * 1000);
    this.everIssued.push(token);
    return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: advertised } };
  }

  /** True when the `Authorization: Bearer` header carries a live token. */
  check(authorization: string | undefined): boolean {
    const m = /^Bearer (\S+)$/i.exec(authorization ?? '');
    if (!m?.[1]) return false;
    if (this.staticTokens.includes(m[1])) return true;
    const expiresAt = this.tokens.get(m[1]);
    return expiresAt !== undefined && this.now() < expiresAt;
  }

  /** Makes every issued token invalid at once. */
  revokeAll(): void {
    this.tokens.clear();
  }

  /** Every token issued so far, revoked ones too (for tests that prove no token reached a log). */
  all(): readonly string[] {
    return this.everIssued;
  }
}

/** RFC 6749 2.3.1: HTTP Basic (form-encoded id and secret) or the client_id/client_secret form fields. */
function credentialsOf(form: URLSearchParams, authorization: string | undefined): [string | null, string | null] {
  const m = /^Basic (\S+)$/i.exec(authorization ?? '');
  if (m?.[1]) {
    const decoded = Buffer.from(m[1], 'base64').toString('utf8');
    const at = decoded.indexOf(':');
    if (at < 0) return [null, null];
    return [decodeURIComponent(decoded.slice(0, at)), decodeURIComponent(decoded.slice(at + 1))];
  }
  return [form.get('client_id'), form.get('client_secret')];
}
