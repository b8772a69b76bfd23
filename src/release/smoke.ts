// The smoke test a release passes before the service is switched to it, run by the target's node as the service
// user: every native module it will load is loaded (a wrong CPU, Node ABI or a too-new glibc fails here, not in
// the unit), SQLite answers a query, and the live store's schema is one this release reads.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { STORE_SCHEMA, newerSchema, readStoreSchema } from '../store/database.js';
import type { Manifest } from './manifest.js';
import { isTargetPrebuild, type NativeEntry, type Target } from './native.js';

/** What the smoke test found; `problems` empty means the release may be switched to. */
export interface SmokeReport {
  loaded: string[];
  /** The live store's schema, null when there is no store yet. */
  storeSchema: number | null;
  problems: string[];
  /** Said to the operator even when all is well (a migration ahead). */
  notes: string[];
}

/** Loads the tree's native modules for `target`, then checks the store in `dataDir` against this release's schema. */
export function smoke(root: string, m: Manifest, target: Target, dataDir: string): SmokeReport {
  const report: SmokeReport = { loaded: [], storeSchema: null, problems: [], notes: [] };
  const load = createRequire(join(root, 'package.json'));
  for (const e of m.native.filter((x) => loadsOn(x, target))) {
    try {
      load(join(root, e.file));
      report.loaded.push(e.file);
    } catch (err) {
      report.problems.push(`${e.file} does not load: ${firstLine(err)}`);
    }
  }
  if (existsSync(join(root, 'node_modules/better-sqlite3'))) sqliteAnswers(load, report);
  if (report.problems.length === 0) checkStore(dataDir, m.version, report);
  return report;
}

function checkStore(dataDir: string, version: string, report: SmokeReport): void {
  try {
    report.storeSchema = readStoreSchema(join(dataDir, 'labgate.db'));
  } catch (err) {
    report.problems.push(`cannot read the store in ${dataDir}: ${firstLine(err)}`);
    return;
  }
  const found = report.storeSchema;
  if (found !== null && found > STORE_SCHEMA) {
    const refusal = newerSchema(found, STORE_SCHEMA);
    report.problems.push(`labgate ${version} would refuse the store in ${dataDir} (${refusal.code}): ${refusal.message}`);
  } else if (found !== null && found < STORE_SCHEMA) {
    report.notes.push(`labgate ${version} will migrate the store in ${dataDir} from schema ${found} to ${STORE_SCHEMA} when it starts`);
  }
}

// What bindings and node-gyp-build load on this machine: every built file that is a Node module, and the
// prebuilt ones of this platform and CPU.
function loadsOn(e: NativeEntry, target: Target): boolean {
  if (e.abi !== 'napi' && !e.abi.startsWith('node-')) return false;
  return e.kind === 'built' || isTargetPrebuild(e.file, target);
}

function sqliteAnswers(load: NodeJS.Require, report: SmokeReport): void {
  try {
    const Database = load('better-sqlite3') as new (path: string) => { prepare(sql: string): { pluck(): { get(): unknown } }; close(): void };
    const db = new Database(':memory:');
    const version = db.prepare('SELECT sqlite_version()').pluck().get();
    db.close();
    report.loaded.push(`better-sqlite3 (SQLite ${String(version)})`);
  } catch (err) {
    report.problems.push(`better-sqlite3 does not work: ${firstLine(err)}`);
  }
}

function firstLine(err: unknown): string {
  return String(err instanceof Error ? err.message : err).split('\n')[0]!;
}
