// The LIMS test server's memory: stored records with ETags, stored idempotent answers, and how often each
// logical record was applied (a replayed answer is not an application), so tests can prove "never twice".
import { createHash } from 'node:crypto';

/** One stored record. */
export interface StoredRecord {
  body: string;
  etag: string;
  version: number;
}

/** An answer kept under an idempotency key, replayed verbatim for a repeat of the same request. */
export interface StoredAnswer {
  status: number;
  etag: string;
  body: string;
  fingerprint: string;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Records, idempotency keys and counters; no I/O. */
export class RecordBook {
  private readonly records = new Map<string, StoredRecord>();
  private readonly answers = new Map<string, StoredAnswer | 'processing'>();
  private readonly applied = new Map<string, number>();
  private readonly edits = new Map<string, number>();
  replays = 0;

  /** The stored record, if any. */
  get(id: string): StoredRecord | undefined {
    return this.records.get(id);
  }

  /** The state of an idempotency key. */
  answer(key: string): StoredAnswer | 'processing' | undefined {
    return this.answers.get(key);
  }

  /** Marks a key as taken by a request that is still running. */
  markProcessing(key: string): void {
    this.answers.set(key, 'processing');
  }

  /** Frees a key whose request ended without an answer worth keeping (errors are not replayed). */
  release(key: string): void {
    if (this.answers.get(key) === 'processing') this.answers.delete(key);
  }

  /** Forgets every stored answer (a LIMS whose idempotency window has passed). */
  forgetAnswers(): void {
    this.answers.clear();
  }

  /** Writes a record as labgate: counted as one application, answer kept under `key`. */
  apply(id: string, body: string, key: string, fingerprint: string): StoredAnswer {
    const record = this.write(id, body);
    this.applied.set(id, (this.applied.get(id) ?? 0) + 1);
    const answer: StoredAnswer = {
      status: record.version === 1 ? 201 : 200,
      etag: record.etag,
      body: JSON.stringify({ recordId: id, etag: record.etag }),
      fingerprint,
    };
    this.answers.set(key, answer);
    return answer;
  }

  /** Writes a record as another writer (a technologist editing in the LIMS); not counted as an application. */
  edit(id: string, body: string): StoredRecord {
    this.edits.set(id, (this.edits.get(id) ?? 0) + 1);
    return this.write(id, body);
  }

  /** How many times labgate's writes of `id` were applied. */
  appliedCount(id: string): number {
    return this.applied.get(id) ?? 0;
  }

  /** Applications per record id. */
  appliedCounts(): ReadonlyMap<string, number> {
    return this.applied;
  }

  /** Number of stored records. */
  get size(): number {
    return this.records.size;
  }

  private write(id: string, body: string): StoredRecord {
    const version = (this.records.get(id)?.version ?? 0) + 1;
    const record = { body, version, etag: `"${version}-${sha(body).slice(0, 16)}"` };
    this.records.set(id, record);
    return record;
  }
}

/** What makes two requests under one key "the same request" (draft-ietf-httpapi-idempotency-key-header). */
export function fingerprintOf(method: string, path: string, body: string): string {
  return sha(`${method} ${path}\n${body}`);
}
