// The signed JWT a backend client authenticates with at an OAuth2 token endpoint (RFC 7523 section 2.2,
// private_key_jwt), as SMART Backend Services (SMART App Launch 2.x) asks for it: RS384 or ES384, `kid` naming the
// key the operator registered, iss = sub = client_id, aud = the token URL, exp at most five minutes ahead and a
// fresh jti. node:crypto only. The private key never leaves this module's caller; the JWKS is its public half.
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

/** The signature algorithms SMART Backend Services requires servers to support. */
export type AssertionAlgorithm = 'RS384' | 'ES384';

/** A private key checked against its algorithm, or why it cannot sign. */
export type SigningKey = { ok: true; key: KeyObject } | { ok: false; reason: string };

/** Reads a PEM private key (PKCS#8, or PKCS#1/SEC1) and checks it suits `algorithm`; the reason names no key material. */
export function signingKey(pem: string, algorithm: AssertionAlgorithm): SigningKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    return { ok: false, reason: 'the private key file holds no PEM private key' };
  }
  const details = key.asymmetricKeyDetails;
  if (algorithm === 'RS384' && (key.asymmetricKeyType !== 'rsa' || (details?.modulusLength ?? 0) < 2048)) {
    return { ok: false, reason: 'RS384 needs an RSA private key of at least 2048 bits' };
  }
  if (algorithm === 'ES384' && (key.asymmetricKeyType !== 'ec' || details?.namedCurve !== 'secp384r1')) {
    return { ok: false, reason: 'ES384 needs an EC private key on the P-384 curve' };
  }
  return { ok: true, key };
}

/** What the assertion says. */
export interface AssertionClaims {
  clientId: string;
  /** The token endpoint's URL, exactly as registered. */
  audience: string;
  keyId: string;
  /** Epoch ms; the assertion lives five minutes from here. */
  now: number;
  /** A value never used before (RFC 7519 4.1.7). */
  jti: string;
}

/** The compact JWS of a client assertion. */
export function clientAssertion(key: KeyObject, algorithm: AssertionAlgorithm, claims: AssertionClaims): string {
  const header = { alg: algorithm, typ: 'JWT', kid: claims.keyId };
  const seconds = Math.floor(claims.now / 1000);
  const payload = { iss: claims.clientId, sub: claims.clientId, aud: claims.audience, exp: seconds + 300, iat: seconds, jti: claims.jti };
  const input = `${base64url(header)}.${base64url(payload)}`;
  // RFC 7518 3.4: an ECDSA signature is R || S, not the DER that node:crypto gives by default.
  const signature = sign('sha384', Buffer.from(input), algorithm === 'ES384' ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
}

/** The public JWKS of a private key, for the operator to register with the server or publish (RFC 7517). */
export function publicJwks(key: KeyObject, algorithm: AssertionAlgorithm, keyId: string): { keys: object[] } {
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: keyId, alg: algorithm, use: 'sig', key_ops: ['verify'] }] };
}

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
