// Each instrument's `options`, checked against its driver's own schema as part of the configuration, so that
// `check-config` says what `decode` and `run` would refuse, in the same run as every other problem.
import type { z } from 'zod';
import { astmOptionsSchema } from '../../drivers/astm/options.js';
import { hl7OptionsSchema } from '../../drivers/hl7/options.js';
import { lineOptionsSchema } from '../../drivers/line/options.js';

const schemas: Readonly<Record<string, z.ZodType>> = { astm: astmOptionsSchema, hl7: hl7OptionsSchema, line: lineOptionsSchema };

/** The zod issues of every instrument's driver options, with their path in the document; reads the raw document defensively. */
export function driverOptionIssues(input: unknown): z.core.$ZodIssue[] {
  const list = typeof input === 'object' && input !== null ? (input as { instruments?: unknown }).instruments : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((instrument: unknown, i) => {
    if (typeof instrument !== 'object' || instrument === null) return [];
    const { driver, options } = instrument as { driver?: unknown; options?: unknown };
    const schema = typeof driver === 'string' ? schemas[driver] : undefined;
    // A missing or unknown driver, or options that are not a mapping, are the main schema's to report.
    if (schema === undefined || (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))) return [];
    const parsed = schema.safeParse(options ?? {}, { reportInput: true });
    return parsed.success ? [] : parsed.error.issues.map((issue) => ({ ...issue, path: ['instruments', i, 'options', ...issue.path] }));
  });
}
