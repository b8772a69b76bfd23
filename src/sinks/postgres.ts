// The central PostgreSQL loader sink: one upsert+audit statement per batch (postgres-statement.ts), outcomes per
// row, on one connection taken for the batch. A connection that cannot be made pauses the whole sink at once; a
// statement that fails for server or network reasons (a reset connection, a shutdown) is one sink-wide failure, which
// the delivery engine retries and counts toward a pause; a data error is isolated by bisecting the batch so that
// only the poison row is dead-lettered. Forwarded corrections (payload `supersedes`) go in statements of their own,
// so the hot path stays the plain upsert. The sink never touches SQLite and never throws for I/O.
import pg from 'pg';
import { classifyPgError, describePgError } from './postgres-classify.js';
import { poolConfig, type PostgresConnectionOptions } from './postgres-connection.js';
import {
  batchParams,
  batchStatement,
  mayCorrect,
  storedClinicalContent,
  storedVersionsStatement,
  type LoadRow,
  type StoredVersion,
} from './postgres-statement.js';
import { checkRowPayload } from './row-payload.js';
import type { OutboxRow, Outcome, Sink } from '../delivery/contract.js';

/** The PostgreSQL sink's configuration (the `postgres` section) plus the gateway's identity. */
export interface PostgresSinkOptions extends PostgresConnectionOptions {
  /** Sink name in the outbox; defaults to `postgres`. */
  name?: string;
  /** Schema holding result_load and result_load_audit. */
  schema: string;
  gatewayId: string;
}

/** What a test or the composition root may inject. */
export interface PostgresSinkDeps {
  /** A ready pool (tests share one with their assertions); otherwise one is made from the options. */
  pool?: pg.Pool;
  readSecret?: (path: string) => string;
  log?: { warn(obj: object, msg?: string): void };
}

/** A PostgreSQL sink; `pool` is exposed for health checks. */
export interface PostgresSink extends Sink {
  readonly pool: pg.Pool;
}

type Slot = { index: number; load: LoadRow; correction: boolean };

/** Builds the PostgreSQL sink. */
export function createPostgresSink(options: PostgresSinkOptions, deps: PostgresSinkDeps = {}): PostgresSink {
  const owned = deps.pool === undefined;
  const pool = deps.pool ?? new pg.Pool(poolConfig(options, deps.readSecret));
  // An idle client whose socket dies emits 'error' on the pool; unhandled, it would kill the gateway.
  if (owned) pool.on('error', (err) => deps.log?.warn({ err: describePgError(err) }, 'idle PostgreSQL connection failed'));
  return new PostgresLoader(options, pool, owned);
}

type Answer = { dedup_key: string; inserted: boolean; corrected: boolean; conflict: boolean };

class PostgresLoader implements PostgresSink {
  readonly name: string;
  private readonly upsert: string;
  private readonly correcting: string;
  private readonly stored: string;

  constructor(
    private readonly options: PostgresSinkOptions,
    readonly pool: pg.Pool,
    private readonly owned: boolean,
  ) {
    this.name = options.name ?? 'postgres';
    this.upsert = batchStatement(options.schema);
    this.correcting = batchStatement(options.schema, { corrections: true });
    this.stored = storedVersionsStatement(options.schema);
  }

  async deliver(batch: readonly OutboxRow[], signal: AbortSignal): Promise<Outcome[]> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      const reason = describePgError(err);
      return batch.map(() => ({ kind: 'retry', reason, scope: 'unreachable' }));
    }
    const out: Outcome[] = new Array(batch.length);
    let broken: Error | undefined;
    // A checked-out client reports its dying socket as an 'error' event too; unheard, it would kill the gateway.
    const onError = (err: Error): void => void (broken ??= err);
    client.on('error', onError);
    try {
      for (const group of uniqueKeyGroups(prepare(batch, out))) {
        if (broken !== undefined || signal.aborted) notTried(group, broken ? describePgError(broken) : 'stopping', out);
        else broken = (await this.load(client, group, out)) ?? broken;
      }
    } finally {
      client.off('error', onError);
      // A connection whose statement failed for the server's or the network's reasons is closed, never reused.
      client.release(broken);
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }

  // One statement for the slots; on a data error, bisect until the poison row stands alone. Returns the error that
  // failed the statement for sink-wide reasons, if one did.
  private async load(client: pg.PoolClient, slots: readonly Slot[], out: Outcome[]): Promise<Error | undefined> {
    const correcting = slots[0]!.correction;
    try {
      const params = batchParams(
        slots.map((s) => s.load),
        this.options.gatewayId,
      );
      const res = await client.query<Answer>(correcting ? this.correcting : this.upsert, params);
      await this.fill(client, slots, res.rows, out);
      return undefined;
    } catch (err) {
      const reason = describePgError(err);
      if (correcting && (err as { code?: unknown }).code === '42501') {
        // A role granted before corrections existed: only the corrections wait (loaderGrants, POSTGRES.md).
        for (const s of slots) out[s.index] = { kind: 'retry', reason: `${reason} (grant the loader role UPDATE on the clinical columns)`, scope: 'record' };
        return undefined;
      }
      if (classifyPgError(err) === 'sink') {
        failedExchange(slots, reason, out);
        return err instanceof Error ? err : new Error(reason);
      }
      if (slots.length === 1) {
        out[slots[0]!.index] = { kind: 'dead', reason };
        return undefined;
      }
      const half = Math.ceil(slots.length / 2);
      const broken = await this.load(client, slots.slice(0, half), out);
      if (broken === undefined) return this.load(client, slots.slice(half), out);
      notTried(slots.slice(half), describePgError(broken), out);
      return broken;
    }
  }

  private async fill(client: pg.PoolClient, slots: readonly Slot[], rows: readonly Answer[], out: Outcome[]): Promise<void> {
    const byKey = new Map(rows.map((r) => [r.dedup_key, r]));
    const conflicts = rows.filter((r) => r.conflict).map((r) => r.dedup_key);
    const theirs = conflicts.length > 0 ? await this.storedVersions(client, conflicts) : new Map<string, string>();
    for (const s of slots) {
      const r = byKey.get(s.load.key);
      if (!r) out[s.index] = { kind: 'retry', reason: 'row missing from the batch answer', scope: 'record' };
      else if (!r.conflict) out[s.index] = { kind: 'delivered', detail: r.corrected ? 'corrected' : r.inserted ? 'inserted' : 'absorbed' };
      else {
        const version = theirs.get(s.load.key);
        const reason = 'central result_load holds different clinical content for this key';
        out[s.index] = { kind: 'conflict', reason, ...(version ? { theirs: version } : {}) };
      }
    }
  }

  private async storedVersions(client: pg.PoolClient, keys: string[]): Promise<Map<string, string>> {
    try {
      const res = await client.query<StoredVersion & { dedup_key: string }>(this.stored, [keys]);
      // `supersedes` is what a person's forward puts in the payload to replace exactly this version.
      return new Map(res.rows.map((r) => [r.dedup_key, JSON.stringify({ ...r, supersedes: storedClinicalContent(r) })]));
    } catch {
      return new Map(); // the conflict stands; only its evidence is missing
    }
  }
}

// One failed statement is one piece of evidence about the sink, however many rows rode on it (delivery/contract.ts).
function failedExchange(slots: readonly Slot[], reason: string, out: Outcome[]): void {
  slots.forEach((s, i) => (out[s.index] = { kind: 'retry', reason, scope: i === 0 ? 'sink' : 'record' }));
}

function notTried(slots: readonly Slot[], reason: string, out: Outcome[]): void {
  for (const s of slots) out[s.index] = { kind: 'retry', reason, scope: 'record' };
}

// A payload the store did not write, or that is no result payload, is a dead letter before anything is sent (it would
// load a row of NULLs). The server reads the rest; a value it cannot read (22007 ...) is isolated by bisection.
function prepare(batch: readonly OutboxRow[], out: Outcome[]): Slot[] {
  return batch.flatMap((row, index) => {
    const dead = checkRowPayload(row);
    if (dead) {
      out[index] = dead;
      return [];
    }
    return [{ index, load: { key: row.dedupKey, payload: row.payload, attempt: row.attempts + 1 }, correction: mayCorrect(row.payload) }];
  });
}

// ON CONFLICT cannot touch one row twice in a statement, so a repeated key goes to a later statement; corrections
// go to statements of their own.
function uniqueKeyGroups(slots: readonly Slot[]): Slot[][] {
  const groups: { keys: Set<string>; correction: boolean; slots: Slot[] }[] = [];
  for (const slot of slots) {
    let g = groups.find((x) => x.correction === slot.correction && !x.keys.has(slot.load.key));
    if (!g) groups.push((g = { keys: new Set(), correction: slot.correction, slots: [] }));
    g.keys.add(slot.load.key);
    g.slots.push(slot);
  }
  return groups.map((g) => g.slots);
}
