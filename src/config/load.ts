// Loads and validates the YAML configuration, reporting every problem at once with its path.
// Cross-field rules run on the raw document as well, so a duplicate id is reported in the same run as a
// wrong baud rate instead of only after the technician has fixed the first batch.
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { LabgateError } from '../errors.js';
import { readConfigFile, readConfigFileSync, type ConfigFileRead } from './config-file.js';
import { crossChecks } from './cross-checks.js';
import { driverOptionIssues } from './driver-options.js';
import { instrumentsFileOf, instrumentsOf, relabelProblems, withInstruments } from './instruments-file.js';
import { formatPath, formatProblems, type ConfigProblem } from './problem.js';
import { configSchema, type Config } from './schema.js';

export type ConfigResult = { kind: 'ok'; config: Config } | { kind: 'invalid'; problems: ConfigProblem[] };

/** Validates parsed YAML: schema problems and cross-field problems together, in document order. */
export function validateConfig(input: unknown): ConfigResult {
  const parsed = configSchema.safeParse(input, { reportInput: true });
  const problems = [...(parsed.success ? [] : parsed.error.issues), ...driverOptionIssues(input)].map(toProblem);
  const seen = new Set(problems.map((p) => `${p.path}\0${p.message}`));
  for (const p of crossChecks(input)) if (!seen.has(`${p.path}\0${p.message}`)) problems.push(p);
  if (problems.length || !parsed.success) return { kind: 'invalid', problems: sortByPath(problems) };
  return { kind: 'ok', config: parsed.data };
}

/** Parses YAML text; syntax errors are problems too, with line numbers. */
export function parseConfigText(text: string): ConfigResult {
  const parsed = parseYaml(text);
  return parsed.kind === 'invalid' ? parsed : validateConfig(parsed.value ?? {});
}

type Parsed = { kind: 'ok'; value: unknown } | { kind: 'invalid'; problems: ConfigProblem[] };

// `prefix` names the file a problem is in when there are two.
function parseYaml(text: string, prefix = ''): Parsed {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    return {
      kind: 'invalid',
      problems: doc.errors.map((e) => ({ path: `${prefix}(yaml line ${e.linePos?.[0]?.line ?? '?'})`, message: e.message.split('\n')[0] ?? e.message })),
    };
  }
  try {
    return { kind: 'ok', value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) };
  } catch (err) {
    // The yaml library refuses to expand aliases past the count (a "billion laughs" document): a problem, not a crash.
    return {
      kind: 'invalid',
      problems: [{ path: `${prefix}(yaml)`, message: `refused: ${(err as Error).message.toLowerCase()} (more than ${MAX_ALIAS_COUNT} alias expansions)` }],
    };
  }
}

/** Alias expansions allowed in one configuration: plenty for shared mappings, far too few for an alias bomb. */
const MAX_ALIAS_COUNT = 100;

/** Reads and validates a config file; throws LabgateError CONFIG_* (exit code 2) with every problem listed. */
export function loadConfig(file: string): Config {
  const result = checkConfigFile(file);
  if (result.kind === 'invalid') {
    throw new LabgateError('CONFIG_INVALID', `${file} is invalid:\n${formatProblems(result.problems)}`);
  }
  return result.config;
}

/** Reads and validates a config file and its instruments file without throwing for an invalid one (for `check-config`). */
export function checkConfigFile(file: string): ConfigResult {
  return readConfiguration(file).result;
}

/** Where the running configuration comes from (instruments-file.ts): the first `mainCount` instruments are the main file's. */
export interface ConfigLayout {
  file: string;
  instrumentsFile: string;
  /** The instruments file's text; null when there is none. */
  instrumentsText: string | null;
  mainCount: number;
}

/**
 * Reads the main file and its instruments file and validates them as one document, exactly as the service runs them.
 * `instrumentsText` stands in for the instruments file's content (the status page checks a change before writing it).
 * Throws CONFIG_UNREADABLE when the main file cannot be read; an unreadable instruments file is a problem. The layout is
 * null when the main file is not YAML.
 */
export function readConfiguration(file: string, options: { instrumentsText?: string } = {}): { result: ConfigResult; layout: ConfigLayout | null } {
  const main = parseYaml(mainText(readConfigFileSync(file), file));
  if (main.kind === 'invalid') return { result: main, layout: null };
  const instrumentsFile = instrumentsFileOf(main.value);
  const read =
    options.instrumentsText !== undefined ? { text: options.instrumentsText } : instrumentsRead(readConfigFileSync(instrumentsFile), instrumentsFile);
  return combine(file, main.value, instrumentsFile, read);
}

/** readConfiguration for a running gateway (a reload): both files are read off the event loop. */
export async function readConfigurationAsync(file: string): Promise<{ result: ConfigResult; layout: ConfigLayout | null }> {
  const main = parseYaml(mainText(await readConfigFile(file), file));
  if (main.kind === 'invalid') return { result: main, layout: null };
  const instrumentsFile = instrumentsFileOf(main.value);
  return combine(file, main.value, instrumentsFile, instrumentsRead(await readConfigFile(instrumentsFile), instrumentsFile));
}

type InstrumentsRead = { text: string | null } | { problem: ConfigProblem };

function combine(file: string, main: unknown, instrumentsFile: string, read: InstrumentsRead): { result: ConfigResult; layout: ConfigLayout | null } {
  const text = 'text' in read ? read.text : null;
  const layout = (mainCount: number): ConfigLayout => ({ file, instrumentsFile, instrumentsText: text, mainCount });
  if ('problem' in read) return { result: { kind: 'invalid', problems: [read.problem] }, layout: layout(0) };
  const managed = text === null ? ({ kind: 'ok', value: null } as Parsed) : parseYaml(text, `${instrumentsFile}:`);
  const listed = managed.kind === 'ok' ? instrumentsOf(managed.value, instrumentsFile) : managed;
  if (listed.kind === 'invalid') return { result: listed, layout: layout(0) };
  const { document, mainCount } = withInstruments(main ?? {}, listed.instruments);
  const result = validateConfig(document);
  if (result.kind === 'ok' || listed.instruments.length === 0) return { result, layout: layout(mainCount) };
  return { result: { kind: 'invalid', problems: relabelProblems(result.problems, mainCount, instrumentsFile) }, layout: layout(mainCount) };
}

function mainText(read: ConfigFileRead, file: string): string {
  if (read.kind === 'text') return read.text;
  throw new LabgateError('CONFIG_UNREADABLE', `cannot read ${file}: ${read.detail}`);
}

// A missing instruments file holds no instruments (nothing was added from the page yet); any other failure is a problem.
function instrumentsRead(read: ConfigFileRead, file: string): InstrumentsRead {
  if (read.kind === 'text') return { text: read.text };
  if (read.code === 'ENOENT') return { text: null };
  const hint = read.code === 'EACCES' ? ' (it belongs to the labgate user: run as root or as labgate)' : '';
  return { problem: { path: `${file}:(file)`, message: `cannot read the instruments file: ${read.detail}${hint}` } };
}

function toProblem(issue: z.core.$ZodIssue): ConfigProblem {
  const path = formatPath(issue.path);
  const input = 'input' in issue ? issue.input : undefined;
  let message = issue.message.replace(/^Invalid (input|option): /, '');
  if (issue.code === 'unrecognized_keys') {
    return { path: path || '(root)', message: `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}` };
  }
  if (input !== undefined && issue.code !== 'invalid_type' && issue.code !== 'invalid_union') {
    message += `, got ${JSON.stringify(input)}`;
  } else if (issue.code === 'invalid_type') {
    message = input === undefined ? `required (${message})` : `${message}, got ${JSON.stringify(input)}`;
  }
  return { path: path || '(root)', message };
}

/** The file's section order, so problems read top to bottom like the file. */
const sections = ['(', 'gateway', 'instruments', 'sinks', 'delivery', 'alerts'];

function sortByPath(problems: ConfigProblem[]): ConfigProblem[] {
  const rank = (path: string): number => {
    const i = sections.findIndex((s) => path.startsWith(s));
    return i < 0 ? sections.length : i;
  };
  const key = (p: ConfigProblem): string => `${rank(p.path)}${p.path.replace(/\[(\d+)\]/g, (_, n: string) => `[${n.padStart(4, '0')}]`)}`;
  return problems
    .map((p, i) => ({ p, i }))
    .sort((a, b) => key(a.p).localeCompare(key(b.p)) || a.i - b.i)
    .map(({ p }) => p);
}
