// Saving the instruments file so that a power cut at any instant leaves the old or the new file, never a torn one, and
// the version it replaces can be restored. The order is the whole rule:
//   1. the version being replaced is written to config-history/ under a temporary name, fsynced, renamed, and the
//      history directory fsynced: it is durable before anything touches the file;
//   2. the new text is written to `<file>.saving` and fsynced: its data is durable, but no name points at it;
//   3. rename over the file (atomic on POSIX: a reader sees the old inode or the new one), then fsync the directory, so
//      the rename itself survives a power cut.
// A cut before 3 leaves the old file (and perhaps a stale .saving, which the next save truncates); after it, the new.
// Saves run one at a time, and each first checks that the file is still the version the change was made from.
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { nodeDurableFs, type DurableFs } from './durable-fs.js';

/** Previous versions kept for restoring; older ones are removed (the audit log keeps every change's diff). */
export const KEEP_VERSIONS = 10;

/** The identity of a file's content: 16 hex digits of its SHA-256; `none` while there is no file. */
export function versionOf(text: string | null): string {
  return text === null ? 'none' : createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** A version replaced by a save, kept in config-history/. */
export interface PastVersion {
  version: string;
  /** Epoch ms it was replaced. */
  replacedAt: number;
}

/** A save's outcome: saved, or refused because the file is no longer the version the change was made from. */
export type SaveOutcome = { kind: 'saved'; version: string } | { kind: 'changed'; text: string | null; version: string };

export interface ConfigVersionsOptions {
  file: string;
  now: () => number;
  fs?: DurableFs;
  keep?: number;
  /** Runs between the fsync of the new text and the rename (the crash tests stop the process there). */
  beforeRename?: () => void | Promise<void>;
}

const ENTRY = /^(.+)\.(\d{8}T\d{9}Z)\.([0-9a-f]{16})\.yaml$/;

/** The instruments file's current text, its durable saves and its previous versions. */
export class ConfigVersions {
  readonly historyDir: string;
  private readonly fs: DurableFs;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ConfigVersionsOptions) {
    this.fs = o.fs ?? nodeDurableFs;
    this.historyDir = join(dirname(o.file), 'config-history');
  }

  /** The file's text (null when there is none) and its version. */
  async current(): Promise<{ text: string | null; version: string }> {
    const text = await this.fs.read(this.o.file);
    return { text, version: versionOf(text) };
  }

  /** Saves `text` if the file is still at `expected` (a version from current()); one save at a time. */
  save(text: string, expected: string): Promise<SaveOutcome> {
    const run = this.queue.then(() => this.saveNow(text, expected));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Previous versions, newest first. */
  async history(): Promise<PastVersion[]> {
    return (await this.entries()).map(({ version, replacedAt }) => ({ version, replacedAt }));
  }

  /** A previous version's text, or null when it is not kept (any more). */
  async past(version: string): Promise<string | null> {
    const entry = (await this.entries()).find((e) => e.version === version);
    return entry ? this.fs.read(join(this.historyDir, entry.name)) : null;
  }

  private async saveNow(text: string, expected: string): Promise<SaveOutcome> {
    const before = await this.current();
    if (before.version !== expected) return { kind: 'changed', ...before };
    if (before.text !== null) await this.keep(before.text, before.version);
    const saving = `${this.o.file}.saving`;
    await this.fs.writeSynced(saving, text);
    await this.o.beforeRename?.();
    await this.fs.rename(saving, this.o.file);
    await this.fs.syncDir(dirname(this.o.file));
    await this.prune();
    return { kind: 'saved', version: versionOf(text) };
  }

  // The version being replaced, durable in the history before the file changes.
  private async keep(text: string, version: string): Promise<void> {
    const newest = (await this.entries())[0];
    if (newest?.version === version) return;
    await this.fs.makeDir(this.historyDir);
    const stamp = new Date(this.o.now()).toISOString().replace(/[-:.]/g, '');
    const name = `${basename(this.o.file, '.yaml')}.${stamp}.${version}.yaml`;
    const saving = join(this.historyDir, `${name}.saving`);
    await this.fs.writeSynced(saving, text);
    await this.fs.rename(saving, join(this.historyDir, name));
    await this.fs.syncDir(this.historyDir);
  }

  private async prune(): Promise<void> {
    const old = (await this.entries()).slice(this.o.keep ?? KEEP_VERSIONS);
    for (const entry of old) await this.fs.remove(join(this.historyDir, entry.name));
  }

  private async entries(): Promise<{ name: string; version: string; replacedAt: number }[]> {
    return (await this.fs.list(this.historyDir))
      .flatMap((name) => {
        const m = ENTRY.exec(name);
        if (!m) return [];
        const iso = m[2]!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/, '$1-$2-$3T$4:$5:$6.$7Z');
        return [{ name, version: m[3]!, replacedAt: Date.parse(iso) }];
      })
      .sort((a, b) => b.replacedAt - a.replacedAt || b.name.localeCompare(a.name));
  }
}
