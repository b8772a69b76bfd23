// gateway.http.tokenFile, read again when it changes: an administrator who rotates the token (rewrites the file, in
// place or by renaming a new one over it) logs every browser out without restarting the gateway, which would drop an
// analyzer's open session. The file is looked at, at most once a second, when a request needs the token.
import { readFileSync, statSync } from 'node:fs';
import type { Log } from '../../log.js';

/** How often the file's identity (inode, size, modification time) is checked at most. */
const CHECK_MS = 1_000;

/** The token in a file, trimmed; undefined while the file cannot be read or is empty. */
export class TokenFile {
  private token: string | undefined;
  private identity = '';
  private checkedAt = -Infinity;

  /** Reads the file once now; throws when it cannot be read (a gateway must not start without its token). */
  constructor(
    private readonly path: string,
    private readonly now: () => number,
    private readonly log?: Log,
  ) {
    this.identity = identityOf(path);
    this.token = readFileSync(path, 'utf8').trim();
    this.checkedAt = now();
  }

  /** The current token (re-read when the file changed since it was last looked at). */
  readonly current = (): string | undefined => {
    const now = this.now();
    if (now - this.checkedAt < CHECK_MS) return this.token;
    this.checkedAt = now;
    try {
      const identity = identityOf(this.path);
      if (identity === this.identity) return this.token;
      const token = readFileSync(this.path, 'utf8').trim();
      this.identity = identity;
      this.token = token || undefined;
      this.log?.info({ path: this.path }, 'status page token file changed; sessions of the old token end');
    } catch (err) {
      // Refuse everyone rather than keep a token the administrator may have just withdrawn.
      if (this.token !== undefined)
        this.log?.error({ path: this.path, code: (err as NodeJS.ErrnoException).code }, 'status page token file unreadable; refusing every login');
      this.token = undefined;
      this.identity = '';
    }
    return this.token;
  };
}

function identityOf(path: string): string {
  const s = statSync(path, { bigint: true });
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}`;
}
