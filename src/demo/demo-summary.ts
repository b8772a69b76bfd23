// The proof at the end: every result the analyzer sent is in result_load exactly once and was applied by the LIMS
// exactly once, checked against the dedup keys the demo computed itself from what it sent (not against what the
// gateway reports), with the replays each sink absorbed on the way.
import type { LimsServer } from '../lims-server/server.js';
import { recordId } from '../result.js';
import type { LoadedRow } from './central-database.js';
import type { DemoRun } from './demo-scenario.js';

/** The summary's lines and whether every check passed. */
export interface Verdict {
  lines: string[];
  failures: string[];
}

/** Compares what was sent with result_load and with the LIMS's applied counts. */
export function summarize(run: DemoRun, central: readonly LoadedRow[], lims: LimsServer): Verdict {
  const sent = run.sent.map((r) => r.key);
  const failures: string[] = [];
  const specimens = new Set(run.sent.map((r) => r.accession)).size;

  const rows = new Map<string, number>();
  for (const row of central) rows.set(row.dedupKey, (rows.get(row.dedupKey) ?? 0) + 1);
  const pgMissing = sent.filter((k) => !rows.has(k)).length;
  const pgTwice = [...rows.values()].filter((n) => n > 1).length;
  const pgExtra = [...rows.keys()].filter((k) => !sent.includes(k)).length;
  const reloaded = central.filter((r) => r.loadCount > 1).length;
  if (pgMissing || pgTwice || pgExtra) failures.push(`PostgreSQL: ${pgMissing} missing, ${pgTwice} present twice, ${pgExtra} not sent`);

  const applied = lims.appliedCounts();
  const limsMissing = sent.filter((k) => (applied.get(recordId(k)) ?? 0) === 0).length;
  const limsTwice = sent.filter((k) => (applied.get(recordId(k)) ?? 0) > 1).length;
  const limsExtra = lims.stats().records - sent.filter((k) => applied.has(recordId(k))).length;
  if (limsMissing || limsTwice || limsExtra) failures.push(`LIMS: ${limsMissing} missing, ${limsTwice} applied twice, ${limsExtra} not sent`);
  if (run.stored.inserted !== sent.length) failures.push(`the gateway stored ${run.stored.inserted} of ${sent.length} results`);

  const lines = [
    'Summary',
    `  sent by the analyzer    ${sent.length} results (${specimens} specimens)`,
    `  stored by the gateway   ${run.stored.inserted} results, ${run.stored.rejected} rejected`,
    `  central PostgreSQL      ${central.length} rows in result_load; load_count > 1 on ${reloaded} (a re-delivery absorbed, never a second row)`,
    `  LIMS                    ${lims.stats().records} records; ${lims.stats().replays} repeated PUTs answered from their idempotency keys, not applied again`,
    `exactly once in PostgreSQL: ${sent.length - pgMissing} of ${sent.length} results, ${pgMissing} missing, ${pgTwice} twice`,
    `exactly once in the LIMS: ${sent.length - limsMissing} of ${sent.length} results, ${limsMissing} missing, ${limsTwice} applied twice`,
  ];
  return { lines, failures };
}
