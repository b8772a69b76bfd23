// The little the routes remember between requests: a short-lived snapshot shared by every polling browser
// (a snapshot counts the outbox, which is not free on a Pi with a large backlog) and each session's last action
// outcome, shown once after the redirect. Both are bounded.
import type { StatusSnapshot, StatusSource } from './source.js';

/** Reuses one snapshot for `maxAgeMs`; an action invalidates it so its effect shows at once. */
export class SnapshotCache {
  private cached: { at: number; snapshot: Promise<StatusSnapshot> } | undefined;

  constructor(
    private readonly source: StatusSource,
    /** Monotonic: a step of the wall clock must not keep an old snapshot for hours. */
    private readonly now: () => number,
    private readonly maxAgeMs: number,
  ) {}

  /** The current snapshot, read anew when the cached one is too old. */
  get(): Promise<StatusSnapshot> {
    const now = this.now();
    if (this.cached && now - this.cached.at < this.maxAgeMs) return this.cached.snapshot;
    const snapshot = Promise.resolve().then(() => this.source.snapshot());
    this.cached = { at: now, snapshot };
    // A failed read must not be served to the next browser too.
    snapshot.catch(() => {
      if (this.cached?.snapshot === snapshot) this.cached = undefined;
    });
    return snapshot;
  }

  /** Forgets the cached snapshot. */
  invalidate(): void {
    this.cached = undefined;
  }
}

/** An action's outcome as the next page view shows it. */
export interface Flash {
  text: string;
  ok: boolean;
}

/** One pending message per session, oldest dropped beyond `limit`. */
export class FlashMessages {
  private readonly messages = new Map<string, Flash>();

  constructor(private readonly limit = 256) {}

  /** Remembers the message for the session's next page view. */
  set(sessionId: string, message: Flash): void {
    this.messages.delete(sessionId);
    this.messages.set(sessionId, message);
    if (this.messages.size > this.limit) {
      const oldest = this.messages.keys().next().value;
      if (oldest !== undefined) this.messages.delete(oldest);
    }
  }

  /** The session's message, once. */
  take(sessionId: string): Flash | null {
    const message = this.messages.get(sessionId) ?? null;
    this.messages.delete(sessionId);
    return message;
  }
}
