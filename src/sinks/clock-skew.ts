// A token endpoint that refuses a client assertion (or a token request) because the gateway's clock is wrong answers
// like any other refusal: 400 or 401, `invalid_client` or `invalid_grant`. Its Date header (RFC 9110 6.6.1, which an
// origin server with a clock must send) says what time the server thinks it is; far from ours, the refusal is named
// for what it is, with the skew, so that a person sets the clock instead of rotating keys.
import { formatDuration } from '../duration.js';

/** Beyond this difference from the server's Date a refusal is put down to the clock (Date has whole seconds). */
export const SKEW_TOLERANCE_MS = 30_000;

/** The server's clock minus ours (ms) by its Date header, when it has one we can read. */
export function serverSkewMs(dateHeader: string | undefined, now: number): number | undefined {
  if (dateHeader === undefined) return undefined;
  const at = Date.parse(dateHeader);
  return Number.isFinite(at) ? at - now : undefined;
}

/** `2h 0m behind`, `365d 0h ahead of`: the gateway's clock against the server's. */
export function describeSkew(skewMs: number): string {
  // The Date header has whole seconds: beyond a minute, the nearest minute says it best.
  const ms = Math.abs(skewMs);
  const seconds = ms >= 60_000 ? Math.round(ms / 60_000) * 60 : Math.round(ms / 1000);
  return `${formatDuration(seconds)} ${skewMs > 0 ? 'behind' : 'ahead of'}`;
}

/**
 * The reason for a token endpoint's refusal: `token endpoint answered 401 (invalid_client)`, and when the server's Date
 * is more than the tolerance away from our clock, that this is clock skew and how much. `error` and its description
 * come from the body (RFC 6749 5.2), cut short and with secrets removed by `redact`.
 */
export function refusalReason(
  status: number,
  response: { headers: Record<string, string | undefined>; body: string },
  now: number,
  redact: (text: string) => string,
): string {
  const said = oauthError(response.body, redact);
  const base = `token endpoint answered ${status}${said ? ` (${said})` : ''}`;
  const skew = serverSkewMs(response.headers['date'], now);
  if (skew === undefined || Math.abs(skew) <= SKEW_TOLERANCE_MS) return base;
  return `clock skew: ${base}; the gateway's clock is ${describeSkew(skew)} the token server's (its Date header), so what it signs or asks for is out of the server's time window; set the gateway's clock (NTP)`;
}

function oauthError(body: string, redact: (text: string) => string): string {
  let doc: { error?: unknown; error_description?: unknown };
  try {
    doc = JSON.parse(body) as typeof doc;
  } catch {
    return '';
  }
  const parts = [doc.error, doc.error_description].filter((v): v is string => typeof v === 'string' && v.length > 0);
  // Printable text only, and short: a reason ends up in logs and on the page.
  return redact(parts.join(': '))
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 160);
}
