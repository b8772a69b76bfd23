// The configuration is two files. The laboratory IT's file (/etc/labgate/labgate.yaml, read-only to the service) holds
// the gateway, the sinks, delivery, alerts and any instruments IT provisions; the instruments file in the state directory
// (gateway.instrumentsFile, default <dataDir>/instruments.yaml) holds the instruments the status page manages, and
// nothing else. The service runs their union, validated as one document: an id, a serial port or a listening port used
// in both is a problem like any other. Pure: the caller reads the files.
import { join } from 'node:path';
import type { ConfigProblem } from './problem.js';

/** The instruments file when gateway.instrumentsFile is not set. */
export const INSTRUMENTS_FILE_NAME = 'instruments.yaml';
const DEFAULT_DATA_DIR = '/var/lib/labgate';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where a raw (unvalidated) main document puts its instruments file. */
export function instrumentsFileOf(main: unknown): string {
  const gateway = isRecord(main) && isRecord(main['gateway']) ? main['gateway'] : {};
  const named = gateway['instrumentsFile'];
  if (typeof named === 'string' && named.trim()) return named.trim();
  const dataDir = typeof gateway['dataDir'] === 'string' && gateway['dataDir'].trim() ? gateway['dataDir'].trim() : DEFAULT_DATA_DIR;
  return join(dataDir, INSTRUMENTS_FILE_NAME);
}

/** The instruments of a parsed instruments file, or why it is not one (an empty file holds none). */
export function instrumentsOf(value: unknown, file: string): { kind: 'ok'; instruments: unknown[] } | { kind: 'invalid'; problems: ConfigProblem[] } {
  if (value === null || value === undefined) return { kind: 'ok', instruments: [] };
  if (!isRecord(value)) return { kind: 'invalid', problems: [{ path: `${file}:(root)`, message: 'expected a mapping with one key, instruments' }] };
  const others = Object.keys(value).filter((k) => k !== 'instruments');
  if (others.length) {
    const keys = others.map((k) => `'${k}'`).join(', ');
    return {
      kind: 'invalid',
      problems: [{ path: `${file}:(root)`, message: `only instruments belong in this file, got ${keys} (those go in the main file)` }],
    };
  }
  const list = value['instruments'] ?? [];
  if (!Array.isArray(list)) return { kind: 'invalid', problems: [{ path: `${file}:instruments`, message: 'expected a list of instruments' }] };
  return { kind: 'ok', instruments: list };
}

/** The main document with the instruments file's instruments after its own (a main list that is not a list is left for the schema). */
export function withInstruments(main: unknown, managed: readonly unknown[]): { document: unknown; mainCount: number } {
  if (!isRecord(main)) return { document: main, mainCount: 0 };
  const own = main['instruments'];
  if (own !== undefined && !Array.isArray(own)) return { document: main, mainCount: 0 };
  const list = (own ?? []) as unknown[];
  if (managed.length === 0) return { document: main, mainCount: list.length };
  return { document: { ...main, instruments: [...list, ...managed] }, mainCount: list.length };
}

/**
 * Problems of the merged document as the files say them: `instruments[5].id` of a main file with three instruments is
 * `<file>:instruments[2].id`, and a message's `instruments[5]` reads `instruments[2] of <file>`.
 */
export function relabelProblems(problems: readonly ConfigProblem[], mainCount: number, file: string): ConfigProblem[] {
  const managed = (n: string): number | null => (Number(n) >= mainCount ? Number(n) - mainCount : null);
  return problems.map(({ path, message }) => {
    const at = /^instruments\[(\d+)\]/.exec(path);
    const index = at ? managed(at[1]!) : null;
    return {
      path: index === null ? path : `${file}:instruments[${index}]${path.slice(at![0].length)}`,
      message: message.replace(/instruments\[(\d+)\]/g, (whole, n: string) => {
        const k = managed(n);
        return k === null ? whole : `instruments[${k}] of ${file}`;
      }),
    };
  });
}
