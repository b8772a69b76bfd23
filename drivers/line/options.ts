// Per-instrument options of the line driver: the report layout as regular expressions with named groups.
import { z } from 'zod';

/** Named groups a header pattern (`start`, `fields`) may capture. */
export const headerGroups = ['accession', 'year', 'month', 'day', 'hour', 'minute', 'second', 'ampm'] as const;
/** Named groups the `result` pattern may capture (`code` and `value` are required). */
export const resultGroups = ['code', 'value', 'unit', 'flags'] as const;

const pattern = (groups: readonly string[], required: readonly string[] = []): z.ZodType<string, string> =>
  z.string().min(1).superRefine((source, ctx) => {
    let re: RegExp;
    try {
      re = new RegExp(source);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not a regular expression: ${(error as Error).message}` });
      return;
    }
    const names = [...re.source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!);
    for (const name of names.filter((n) => !groups.includes(n))) ctx.addIssue({ code: 'custom', message: `unknown named group '${name}' (expected ${groups.join(', ')})` });
    for (const name of required.filter((n) => !names.includes(n))) ctx.addIssue({ code: 'custom', message: `missing named group '${name}'` });
  });

/** Options of one line instrument. */
export const lineOptionsSchema = z
  .strictObject({
    /** A line that starts a report; may capture accession and time parts. Results after its match on the same line are read too. */
    start: pattern(headerGroups),
    /** Further lines of a report that carry accession or time parts (first capture of each part wins). */
    fields: z.array(pattern(headerGroups)).default([]),
    /** A result; matched as often as it occurs on a line. */
    result: pattern(resultGroups, ['code', 'value']),
    /** A line that ends the report (its results are read first). */
    end: pattern([]).optional(),
    /** Silence after which an open report is complete. */
    idleMs: z.number().int().min(50).max(600_000).optional(),
    ignoreCase: z.boolean().default(false),
    /** Line delimiter on the wire. */
    delimiter: z.string().min(1).default('\n'),
    /** Character set of the printout. */
    encoding: z.enum(['latin1', 'utf8']).default('latin1'),
    /** Status of every result (printouts carry none). */
    status: z.enum(['final', 'preliminary']).default('final'),
    /** Longest line kept; a longer run without a delimiter is dropped (a babbling port never grows memory). */
    maxLineBytes: z.number().int().min(80).max(1_048_576).default(16_384),
    /** A report the store could not take is kept in memory and retried this often (a printer never resends). */
    retryMs: z.number().int().min(100).max(600_000).default(5_000),
    /** Most reports held for retry; beyond it the oldest is dropped with an error (bounded memory). */
    maxPendingReports: z.number().int().min(1).max(10_000).default(100),
    /** Most lines in one report; the report is closed when it reaches this. */
    maxReportLines: z.number().int().min(1).max(100_000).default(1_000),
  })
  .refine((o) => o.end !== undefined || o.idleMs !== undefined, { message: 'a report needs an end: set `end`, `idleMs` or both' });
export type LineOptions = z.output<typeof lineOptionsSchema>;
export type LineOptionsInput = z.input<typeof lineOptionsSchema>;

/** The options with defaults applied (throws on an invalid layout: a configuration error). */
export function lineOptions(input: LineOptionsInput): LineOptions {
  return lineOptionsSchema.parse(input);
}

/** The layout's patterns, compiled once. */
export interface LineLayout {
  start: RegExp;
  fields: RegExp[];
  result: RegExp;
  end: RegExp | undefined;
}

/** Compiles the patterns (`result` with the global flag, so every result on a line is found). */
export function compileLayout(o: LineOptions): LineLayout {
  const flags = o.ignoreCase ? 'i' : '';
  return {
    start: new RegExp(o.start, flags),
    fields: o.fields.map((f) => new RegExp(f, flags)),
    result: new RegExp(o.result, `g${flags}`),
    end: o.end === undefined ? undefined : new RegExp(o.end, flags),
  };
}
