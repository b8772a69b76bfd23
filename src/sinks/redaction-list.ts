// The secrets and tokens an upstream's answer might echo back, replaced before its text reaches a log line, a dead
// letter or the status page. A gateway fetches a token every few minutes for months and signs a fresh client assertion
// for every fetch (and every probe while the token endpoint is down), so only the most recent are kept: the secret is
// added again at every fetch and so always stays, and a token or assertion is only ever sent shortly after it is made.
export class RedactionList {
  private readonly recent = new Set<string>();

  constructor(private readonly keep = 16) {}

  /** Remembers `secret` as the most recent; the oldest beyond `keep` is forgotten. */
  add(secret: string): void {
    if (!secret) return;
    this.recent.delete(secret);
    this.recent.add(secret);
    if (this.recent.size > this.keep) this.recent.delete(this.recent.values().next().value!);
  }

  /** `text` with every remembered secret replaced by `[redacted]`. */
  redact(text: string): string {
    let out = text;
    for (const s of this.recent) out = out.split(s).join('[redacted]');
    return out;
  }

  get size(): number {
    return this.recent.size;
  }
}
