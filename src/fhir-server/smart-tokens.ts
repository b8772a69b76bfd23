// The test server's token endpoint: OAuth2 client credentials with a client secret (the LIMS test server's desk),
// and SMART Backend Services (SMART App Launch 2.x, "Backend Services"): a client_credentials grant whose client
// authenticates with a JWT it signed (RFC 7523 private_key_jwt), checked here against the public keys the operator
// registered for it (its JWKS). The checks are the specification's: alg RS384 or ES384, kid naming a registered
// key, iss = sub = client_id, aud = this token endpoint, exp at most five minutes ahead, jti never seen before.
import { createPublicKey, randomBytes, verify, type JsonWebKey } from 'node:crypto';
import { TokenDesk, type LimsClient } from '../lims-server/tokens.js';

/** A backend client registered with its public keys. */
export interface SmartClient {
  clientId: string;
  /** The JWKS the operator registered (public keys with `kid`). */
  jwks: { keys: JsonWebKey[] };
  /** Scopes it may be granted, e.g. `system/Observation.write`; all when absent. */
  scopes?: string[];
}

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const MAX_LIFETIME_MS = 5 * 60_000;

type Grant = { status: number; body: object };

/** Issues and checks bearer tokens for both kinds of client. */
export class SmartTokenDesk {
  private readonly secrets: TokenDesk;
  private readonly tokens = new Map<string, number>();
  private readonly seenJti = new Map<string, number>();
  private readonly issued: string[] = [];
  /** Why the last assertion was refused (for tests; never sent to the client). */
  lastRefusal: string | null = null;

  constructor(
    private readonly smartClients: readonly SmartClient[],
    secretClients: readonly LimsClient[],
    staticTokens: readonly string[],
    private readonly now: () => number,
  ) {
    this.secrets = new TokenDesk(secretClients, now, staticTokens);
  }

  /** Handles POST to the token endpoint; `tokenUrl` is this endpoint's own URL (the expected `aud`). */
  grant(form: URLSearchParams, authorization: string | undefined, tokenUrl: string, ttlSeconds: number, advertised: number): Grant {
    if (form.get('client_assertion_type') === null) {
      const granted = this.secrets.grant(form, authorization, ttlSeconds, advertised);
      const token = (granted.body as { access_token?: string }).access_token;
      if (token) this.issued.push(token);
      return granted;
    }
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } };
    if (form.get('client_assertion_type') !== ASSERTION_TYPE) return this.refuse('client_assertion_type is not jwt-bearer');
    const checked = this.checkAssertion(form.get('client_assertion') ?? '', tokenUrl);
    if (typeof checked === 'string') return this.refuse(checked);
    const scope = form.get('scope') ?? '';
    const allowed = checked.scopes;
    if (allowed && scope.split(' ').some((s) => s && !allowed.includes(s))) return { status: 400, body: { error: 'invalid_scope' } };
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, this.now() + ttlSeconds * 1000);
    this.issued.push(token);
    return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: advertised, scope } };
  }

  /** True when `Authorization: Bearer` carries a live token of either kind. */
  check(authorization: string | undefined): boolean {
    if (this.secrets.check(authorization)) return true;
    const m = /^Bearer (\S+)$/i.exec(authorization ?? '');
    const expiresAt = m?.[1] ? this.tokens.get(m[1]) : undefined;
    return expiresAt !== undefined && this.now() < expiresAt;
  }

  revokeAll(): void {
    this.secrets.revokeAll();
    this.tokens.clear();
  }

  all(): readonly string[] {
    return this.issued;
  }

  private refuse(why: string): Grant {
    this.lastRefusal = why;
    return { status: 401, body: { error: 'invalid_client', error_description: why } };
  }

  /** The registered client, or why the assertion is refused. */
  private checkAssertion(jwt: string, tokenUrl: string): SmartClient | string {
    const parts = jwt.split('.');
    if (parts.length !== 3) return 'not a compact JWS';
    const [h, p, s] = parts as [string, string, string];
    const header = parseJson(h) as { alg?: unknown; kid?: unknown } | null;
    const claims = parseJson(p) as { iss?: unknown; sub?: unknown; aud?: unknown; exp?: unknown; jti?: unknown } | null;
    if (!header || !claims) return 'header or claims are not JSON';
    if (header.alg !== 'RS384' && header.alg !== 'ES384') return `alg ${String(header.alg)} is not RS384 or ES384`;
    const client = this.smartClients.find((c) => c.clientId === claims.iss);
    if (!client || claims.sub !== claims.iss) return 'iss and sub must both be a registered client_id';
    const jwk = client.jwks.keys.find((k) => k.kid === header.kid);
    if (!jwk) return `kid ${String(header.kid)} is not in the client's JWKS`;
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    const signature = Buffer.from(s, 'base64url');
    const ok = verify('sha384', Buffer.from(`${h}.${p}`), header.alg === 'ES384' ? { key, dsaEncoding: 'ieee-p1363' } : key, signature);
    if (!ok) return 'signature does not verify with the registered key';
    const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!audiences.includes(tokenUrl)) return 'aud is not this token endpoint';
    const now = this.now();
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return 'expired';
    if (claims.exp * 1000 > now + MAX_LIFETIME_MS + 5_000) return 'exp is more than five minutes ahead';
    if (typeof claims.jti !== 'string' || !claims.jti) return 'no jti';
    for (const [jti, until] of this.seenJti) if (until <= now) this.seenJti.delete(jti);
    if (this.seenJti.has(claims.jti)) return 'jti replayed';
    this.seenJti.set(claims.jti, claims.exp * 1000);
    return client;
  }
}

function parseJson(part: string): unknown {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null ? v : null;
  } catch {
    return null;
  }
}
