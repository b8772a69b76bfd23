// Sessions ended by "Log out", remembered on the server until they would have expired anyway, so a copied cookie is
// worthless after its owner logged out. Sessions are otherwise stateless (session.ts), which is why only the
// revoked ones are stored: a hash of the id and its expiry. The file form keeps them across restarts, owner-only.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

/** Where revoked sessions are kept. */
export interface RevokedSessions {
  has(id: string, now: number): boolean;
  /** Remembers `id` until `expiresAt` (epoch ms). */
  add(id: string, expiresAt: number, now: number): void;
}

/** Revoked sessions at most this many at once (logouts are clicks, not traffic); the soonest to expire go first. */
const MAX_REVOKED = 5_000;

const digest = (id: string): string => createHash('sha256').update(`labgate-revoked:${id}`).digest('hex');

/** In memory (lost at restart); the base of the file form. */
export class MemoryRevokedSessions implements RevokedSessions {
  protected entries = new Map<string, number>();

  has(id: string, now: number): boolean {
    const expiresAt = this.entries.get(digest(id));
    return expiresAt !== undefined && expiresAt > now;
  }

  add(id: string, expiresAt: number, now: number): void {
    for (const [key, at] of this.entries) if (at <= now) this.entries.delete(key);
    this.entries.set(digest(id), expiresAt);
    if (this.entries.size > MAX_REVOKED) {
      const soonest = [...this.entries].sort((a, b) => a[1] - b[1]).slice(0, this.entries.size - MAX_REVOKED);
      for (const [key] of soonest) this.entries.delete(key);
    }
  }
}

/** Kept in a JSON file (written whole, then renamed over the old one, mode 0600). */
export class FileRevokedSessions extends MemoryRevokedSessions {
  constructor(private readonly file: string) {
    super();
    this.entries = read(file);
  }

  override add(id: string, expiresAt: number, now: number): void {
    super.add(id, expiresAt, now);
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.entries)), { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}

function read(file: string): Map<string, number> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // A torn write cannot happen (rename), but a damaged file must not keep the gateway from starting.
    return new Map();
  }
  if (typeof parsed !== 'object' || parsed === null) return new Map();
  return new Map(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number'));
}
