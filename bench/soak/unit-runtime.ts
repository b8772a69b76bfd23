// The soak runs the gateway as the systemd unit does: with the unit's options to node (ExecStart, before the script)
// and its Environment= lines (malloc's and node's settings), so what it measures is what a Pi in the field runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../test/e2e/harness.js';

/** How the unit starts node: its options before the entry point, and the environment it sets. */
export interface UnitRuntime {
  nodeArgs: string[];
  env: Record<string, string>;
}

/** The unit file in this checkout. */
export const unitFile = join(repoRoot, 'systemd/labgate.service');

/** Reads the unit's runtime from `file`. */
export function readUnitRuntime(file: string = unitFile): UnitRuntime {
  return unitRuntime(readFileSync(file, 'utf8'));
}

/**
 * The node options and environment of a unit's [Service] section. ExecStart must run node on a script: the words
 * between the binary and the first word that is not an option are node's options. Environment= takes
 * space-separated NAME=value words (quoted words as one), as systemd does; the last assignment wins.
 */
export function unitRuntime(text: string): UnitRuntime {
  const nodeArgs: string[] = [];
  const env: Record<string, string> = {};
  let execStart: string[] | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const setting = /^(ExecStart|Environment)=(.*)$/.exec(line);
    if (!setting) continue;
    const words = unitWords(setting[2]!);
    if (setting[1] === 'ExecStart') execStart = words;
    else
      for (const word of words) {
        const eq = word.indexOf('=');
        if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
      }
  }
  if (execStart === null) throw new Error('the unit has no ExecStart=');
  if (!/(^|\/)node$/.test(execStart[0] ?? '')) throw new Error(`the unit's ExecStart= does not run node: ${execStart[0]}`);
  for (const word of execStart.slice(1)) {
    if (!word.startsWith('-')) break;
    nodeArgs.push(word);
  }
  return { nodeArgs, env };
}

// systemd's word splitting, as far as a unit of ours uses it: spaces separate, double or single quotes group.
function unitWords(value: string): string[] {
  const words: string[] = [];
  for (const m of value.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}
