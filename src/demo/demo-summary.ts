// The proof at the end: every result the analyzer sent is in result_load exactly once and was applied by the LIMS
// exactly once, checked against the dedup keys the demo computed itself from what it sent (not against what the
// gateway reports), with the replays each sink absorbed on the way.
import type { Census } from '../fhir-server/server.js';
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
export function summarize(run: DemoRun, central: readonly LoadedRow[], lims: LimsServer, fhir: Census | null = null): Verdict {
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
  if (run.hl7) {
    // The HL7 analyzer's results, sent after its host query: the same proof, said on its own line.
    const once = run.hl7.filter((k) => rows.get(k) === 1 && applied.get(recordId(k)) === 1).length;
    if (once !== run.hl7.length) failures.push(`HL7 analyzer: ${run.hl7.length - once} of ${run.hl7.length} results not exactly once in both sinks`);
    lines.push(`the HL7 analyzer's queried results: ${once} of ${run.hl7.length} exactly once in PostgreSQL and the LIMS`);
  }
  if (fhir) {
    const verdict = fhirVerdict(sent, fhir);
    lines.splice(5, 0, verdict.detail);
    lines.push(verdict.line);
    failures.push(...verdict.failures);
  }
  return { lines, failures };
}

/** One Observation per result, carrying the result's key as its identifier, each at its first version. */
function fhirVerdict(sent: readonly string[], census: Census): { detail: string; line: string; failures: string[] } {
  const count = (k: string): number => census.perIdentifier[k] ?? 0;
  const missing = sent.filter((k) => count(k) === 0).length;
  const twice = sent.filter((k) => count(k) > 1).length;
  const extra = Object.keys(census.perIdentifier).filter((k) => !sent.includes(k)).length;
  const rewritten = Object.values(census.versions).filter((n) => n > 1).length;
  const failures = missing || twice || extra || rewritten ? [`FHIR: ${missing} missing, ${twice} twice, ${extra} not sent, ${rewritten} rewritten`] : [];
  return {
    detail: `  FHIR server             ${census.observations} Observations; ${rewritten} rewritten by a re-send (a replay finds the same one and changes nothing)`,
    line: `exactly once on the FHIR server: ${sent.length - missing} of ${sent.length} results, ${missing} missing, ${twice} twice`,
    failures,
  };
}
