// Loads and validates the YAML configuration, reporting every problem at once with its path.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { LabgateError } from '../errors.js';
import { configSchema, type Config } from './schema.js';

/** A validation problem: `instruments[1].transport.baudRate: expected one of ..., got 96000`. */
export interface ConfigProblem {
  path: string;
  message: string;
}

export type ConfigResult = { kind: 'ok'; config: Config } | { kind: 'invalid'; problems: ConfigProblem[] };

/** Validates parsed YAML; cross-field rules (unique ids) are checked here too. */
export function validateConfig(input: unknown): ConfigResult {
  const parsed = configSchema.safeParse(input, { reportInput: true });
  if (!parsed.success) return { kind: 'invalid', problems: parsed.error.issues.map(toProblem) };
  const problems = crossChecks(parsed.data);
  return problems.length ? { kind: 'invalid', problems } : { kind: 'ok', config: parsed.data };
}

/** Parses YAML text; syntax errors are problems too, with line numbers. */
export function parseConfigText(text: string): ConfigResult {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length) {
    return { kind: 'invalid', problems: doc.errors.map((e) => ({ path: '(yaml)', message: e.message.split('\n')[0] ?? e.message })) };
  }
  return validateConfig(doc.toJS());
}

/** Reads and validates a config file; throws LabgateError CONFIG_* (exit code 2) with every problem listed. */
export function loadConfig(file: string): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabgateError('CONFIG_UNREADABLE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const result = parseConfigText(text);
  if (result.kind === 'invalid') {
    throw new LabgateError('CONFIG_INVALID', `${file} is invalid:\n${formatProblems(result.problems)}`);
  }
  return result.config;
}

/** One line per problem, for the terminal. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => `  ${p.path}: ${p.message}`).join('\n');
}

function toProblem(issue: z.core.$ZodIssue): ConfigProblem {
  const path = formatPath(issue.path);
  const input = 'input' in issue ? issue.input : undefined;
  let message = issue.message.replace(/^Invalid (input|option): /, '');
  if (input !== undefined && issue.code !== 'invalid_type' && issue.code !== 'unrecognized_keys') {
    message += `, got ${JSON.stringify(input)}`;
  } else if (issue.code === 'invalid_type') {
    message = input === undefined ? `required (${message})` : message;
  }
  return { path: path || '(root)', message };
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), '');
}

function crossChecks(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Map<string, number>();
  config.instruments.forEach((instrument, i) => {
    const first = seen.get(instrument.id);
    if (first !== undefined) problems.push({ path: `instruments[${i}].id`, message: `duplicate id '${instrument.id}' (also instruments[${first}])` });
    else seen.set(instrument.id, i);
    const codes = new Set<string>();
    instrument.mapping.forEach((m, j) => {
      if (codes.has(m.code)) problems.push({ path: `instruments[${i}].mapping[${j}].code`, message: `duplicate test code '${m.code}'` });
      codes.add(m.code);
    });
  });
  return problems;
}
