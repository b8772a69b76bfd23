// What counts as loopback, for `check-config` (a listener off loopback needs a token file) and for `run` (which then
// demands the token on every request). One function, so the two can never disagree about a host such as
// `127.evil.example` (a name, not the loopback address) or `[::1]`.
import { isIP } from 'node:net';

/** True for an address or name that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1') return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare;
  return isIP(v4) === 4 && v4.startsWith('127.');
}
