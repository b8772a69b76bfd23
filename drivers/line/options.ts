// Per-instrument options of the line driver: the report layout as regular expressions with named groups, or result rows
// read by column position; and how lines are framed on the wire.
import { z } from 'zod';
import type { FramingConfig } from './framing.js';

/** Named groups a header pattern (`start`, `fields`) may capture. */
export const headerGroups = ['accession', 'year', 'month', 'day', 'hour', 'minute', 'second', 'ampm'] as const;
/** Named groups the `result` pattern may capture (`code` and `value` are required). */
export const resultGroups = ['code', 'value', 'unit', 'flags'] as const;

const pattern = (groups: readonly string[], required: readonly string[] = []): z.ZodType<string, string> =>
  z
    .string()
    .min(1)
    .superRefine((source, ctx) => {
      let re: RegExp;
      try {
        re = new RegExp(source);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `not a regular expression: ${(error as Error).message}` });
        return;
      }
      const names = [...re.source.matchAll(/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g)].map((m) => m[1]!);
      for (const name of names.filter((n) => !groups.includes(n)))
        ctx.addIssue({ code: 'custom', message: `unknown named group '${name}' (expected ${groups.join(', ')})` });
      for (const name of required.filter((n) => !names.includes(n))) ctx.addIssue({ code: 'custom', message: `missing named group '${name}'` });
    });

/** Columns `[first, last]`, 1-based and inclusive, as a vendor's manual prints a fixed-width layout. */
const columnRange = z
  .tuple([z.number().int().min(1).max(1_048_576), z.number().int().min(1).max(1_048_576)])
  .refine(([first, last]) => first <= last, 'the first column must not be after the last');

/** One analyte whose value a row prints at a fixed position: the code the mapping is keyed on, and its columns. */
export const analyteColumnsSchema = z.strictObject({
  code: z.string().trim().min(1),
  value: columnRange,
  unit: columnRange.optional(),
  flags: columnRange.optional(),
});

/**
 * Result rows read by column position (fixed-width printouts): which lines are rows, and where each part is. A row
 * holds one result whose code is in `code`'s columns, or (`analytes`) one result per analyte at its own columns.
 */
export const resultColumnsSchema = z
  .strictObject({
    /** A report line that holds results (anchored patterns such as `^[A-Z]` keep headers out). */
    rows: pattern([]),
    code: columnRange.optional(),
    value: columnRange.optional(),
    unit: columnRange.optional(),
    flags: columnRange.optional(),
    /** The analyte each column holds, e.g. the eleven fractions an HbA1c analyzer prints on one row. */
    analytes: z.array(analyteColumnsSchema).min(1).max(256).optional(),
  })
  .refine(
    (c) =>
      c.analytes === undefined
        ? c.code !== undefined && c.value !== undefined
        : c.code === undefined && c.value === undefined && c.unit === undefined && c.flags === undefined,
    {
      message: 'a row is read by `code` and `value` columns, or by `analytes` (a code per column): set one of them',
    },
  );

/** Options of one line instrument. */
export const lineOptionsSchema = z
  .strictObject({
    /** A line that starts a report; may capture accession and time parts. Results after its match on the same line are read too. */
    start: pattern(headerGroups),
    /** Further lines of a report that carry accession or time parts (first capture of each part wins). */
    fields: z.array(pattern(headerGroups)).default([]),
    /** A result; matched as often as it occurs on a line. Give this or `columns`. */
    result: pattern(resultGroups, ['code', 'value']).optional(),
    /** Result rows by column position instead of `result` (fixed-width layouts). */
    columns: resultColumnsSchema.optional(),
    /** A line that ends the report (its results are read first). */
    end: pattern([]).optional(),
    /** Silence after which an open report is complete. */
    idleMs: z.number().int().min(50).max(600_000).optional(),
    ignoreCase: z.boolean().default(false),
    /** `lines`: text up to `delimiter`. `stx-etx-bcc`: records framed STX text ETX and one block check character. */
    framing: z.enum(['lines', 'stx-etx-bcc']).default('lines'),
    /** Line delimiter on the wire (framing `lines`). */
    delimiter: z.string().min(1).default('\n'),
    /** The block check after ETX (framing `stx-etx-bcc`): XOR of the bytes (ISO 1155), or their sum modulo 256. */
    bcc: z.enum(['xor', 'sum']).default('xor'),
    /** Whether the block check covers STX too; by default it covers the text and ETX (ISO 1745). */
    bccIncludesStx: z.boolean().default(false),
    /** Character set of the printout. */
    encoding: z.enum(['latin1', 'utf8']).default('latin1'),
    /** Status of every result (printouts carry none). */
    status: z.enum(['final', 'preliminary']).default('final'),
    /** Longest line (or record text) kept; a longer one is dropped whole and reported (a babbling port never grows memory). */
    maxLineBytes: z.number().int().min(80).max(1_048_576).default(16_384),
    /** A report the store could not take is kept in memory and retried this often (a printer never resends). */
    retryMs: z.number().int().min(100).max(600_000).default(5_000),
    /** Most reports held for retry; beyond it the oldest is lost, and counted and shown as lost (bounded memory). */
    maxPendingReports: z.number().int().min(1).max(10_000).default(100),
    /** Most lines in one report; the report is closed when it reaches this. */
    maxReportLines: z.number().int().min(1).max(100_000).default(1_000),
  })
  .refine((o) => o.end !== undefined || o.idleMs !== undefined, { message: 'a report needs an end: set `end`, `idleMs` or both' })
  .refine((o) => (o.result === undefined) !== (o.columns === undefined), { message: 'results are read by `result` or by `columns`: set exactly one' });
export type LineOptions = z.output<typeof lineOptionsSchema>;
export type LineOptionsInput = z.input<typeof lineOptionsSchema>;

/** The options with defaults applied (throws on an invalid layout: a configuration error). */
export function lineOptions(input: LineOptionsInput): LineOptions {
  return lineOptionsSchema.parse(input);
}

/** Result columns with their row pattern compiled. */
export type ResultColumns = Omit<z.output<typeof resultColumnsSchema>, 'rows'> & { rows: RegExp };

/** The layout's patterns, compiled once: `result` or `columns`, never both. */
export interface LineLayout {
  start: RegExp;
  fields: RegExp[];
  result: RegExp | undefined;
  columns: ResultColumns | undefined;
  end: RegExp | undefined;
}

/** Compiles the patterns (`result` with the global flag, so every result on a line is found). */
export function compileLayout(o: LineOptions): LineLayout {
  const flags = o.ignoreCase ? 'i' : '';
  return {
    start: new RegExp(o.start, flags),
    fields: o.fields.map((f) => new RegExp(f, flags)),
    result: o.result === undefined ? undefined : new RegExp(o.result, `g${flags}`),
    columns: o.columns === undefined ? undefined : { ...o.columns, rows: new RegExp(o.columns.rows, flags) },
    end: o.end === undefined ? undefined : new RegExp(o.end, flags),
  };
}

/** How the instrument's lines are framed, for the runner and `decode` alike. */
export function framingOf(o: LineOptions): FramingConfig {
  if (o.framing === 'stx-etx-bcc') return { kind: 'stx-etx-bcc', maxLineBytes: o.maxLineBytes, bcc: o.bcc, bccIncludesStx: o.bccIncludesStx };
  return { kind: 'lines', delimiter: Buffer.from(o.delimiter, 'latin1'), maxLineBytes: o.maxLineBytes };
}
