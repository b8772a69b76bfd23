// A configuration problem and how it reads: the one shape every check (schema, cross-field, files) reports in.

/** A validation problem: `instruments[1].transport.baudRate: expected one of ..., got 96000`. */
export interface ConfigProblem {
  path: string;
  message: string;
}

/** One line per problem, for the terminal. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems.map((p) => `  ${p.path}: ${p.message}`).join('\n');
}

/** `instruments[1].transport.baudRate` from zod's `['instruments', 1, 'transport', 'baudRate']`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), '');
}
