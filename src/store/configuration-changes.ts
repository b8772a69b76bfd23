// The audit log's entries of configuration changes (the status page's saves and restores; their actions start with
// `config-`), newest first, read through their partial index (migration 9, same condition) so a log holding an entry
// per result is not scanned for them.
import type Database from 'better-sqlite3';

/** One configuration change as audited. */
export interface ConfigurationChange {
  id: number;
  at: number;
  actor: string;
  action: string;
  subject: string | null;
  /** The entry's detail, parsed (what the page wrote: summary, diff, versions); null when absent or unreadable. */
  detail: Record<string, unknown> | null;
}

/** Reads the configuration changes from the audit log. */
export class ConfigurationChanges {
  private readonly newest: Database.Statement;

  constructor(db: Database.Database) {
    this.newest = db.prepare(`SELECT id, at, actor, action, subject, detail FROM audit WHERE action GLOB 'config-*' ORDER BY id DESC LIMIT ?`);
  }

  /** The newest `limit` changes, newest first. */
  list(limit: number): ConfigurationChange[] {
    return (this.newest.all(limit) as (Omit<ConfigurationChange, 'detail'> & { detail: string | null })[]).map((row) => ({
      ...row,
      detail: parse(row.detail),
    }));
  }
}

function parse(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
