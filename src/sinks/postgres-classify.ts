// What a PostgreSQL error means for delivery, as a table keyed by SQLSTATE prefix (PostgreSQL manual, Appendix A).
// 'sink': the server or the connection is the problem; pause the whole sink and probe (never burn rows).
// 'data': one row's content is the problem; split the batch until the row is found, dead-letter only it.

/** How a failed statement is handled. */
export type PgFailureKind = 'sink' | 'data';

/** SQLSTATE prefix → kind. The longest matching prefix wins; anything unlisted is treated as 'sink'. */
export const sqlStateTable: readonly (readonly [prefix: string, kind: PgFailureKind, why: string])[] = [
  ['08', 'sink', 'connection exception'],
  ['53', 'sink', 'insufficient resources (disk full, out of memory, too many connections)'],
  ['57P', 'sink', 'server shutting down or not accepting connections yet'],
  ['57014', 'sink', 'statement timeout or cancel'],
  ['58', 'sink', 'system error (I/O) on the server'],
  ['XX', 'sink', 'internal error on the server'],
  ['28', 'sink', 'authentication failed: the configuration or the role must be fixed'],
  ['3D', 'sink', 'database does not exist'],
  ['42', 'sink', 'schema or privilege problem: run pg-migrate or grant the role'],
  ['40', 'sink', 'serialization failure or deadlock: try again shortly'],
  ['55', 'sink', 'object not in prerequisite state (lock not available)'],
  ['21', 'data', 'cardinality violation'],
  ['22', 'data', 'data exception (value out of range, invalid text representation)'],
  ['23', 'data', 'integrity constraint violation other than the dedup key'],
];

/** Classifies an error thrown by `pg`: socket errors, timeouts and unknown codes are sink-wide. */
export function classifyPgError(err: unknown): PgFailureKind {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return 'sink';
  let best: (typeof sqlStateTable)[number] | undefined;
  for (const entry of sqlStateTable) {
    if (code.startsWith(entry[0]) && (!best || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1] ?? 'sink';
}

/** A short, secret-free description of a pg error for last_error and dead-letter reasons. */
export function describePgError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
}
