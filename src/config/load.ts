// Loads and validates the YAML configuration, reporting every problem at once with its path.
// Cross-field rules run on the raw document as well, so a duplicate id is reported in the same run as a
// wrong baud rate instead of only after the technician has fixed the first batch.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { LabgateError } from '../errors.js';
import { crossChecks } from './cross-checks.js';
import { driverOptionIssues } from './driver-options.js';
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
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length) {
    return {
      kind: 'invalid',
      problems: doc.errors.map((e) => ({ path: `(yaml line ${e.linePos?.[0]?.line ?? '?'})`, message: e.message.split('\n')[0] ?? e.message })),
    };
  }
  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // The yaml library refuses to expand aliases past the count (a "billion laughs" document): a problem, not a crash.
    return {
      kind: 'invalid',
      problems: [{ path: '(yaml)', message: `refused: ${(err as Error).message.toLowerCase()} (more than ${MAX_ALIAS_COUNT} alias expansions)` }],
    };
  }
  return validateConfig(input ?? {});
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

/** Reads and validates a config file without throwing for an invalid one (for `check-config`). */
export function checkConfigFile(file: string): ConfigResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabgateError('CONFIG_UNREADABLE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseConfigText(text);
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
