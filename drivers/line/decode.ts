// `labgate decode` for printed reports: the capture is split into lines as the runner's parser does,
// and its end counts as the idle gap (a capture ends when the analyzer fell silent).
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { assemble, initialAssemblerState, type AssemblerEffect, type AssemblerState, type Report } from './assembler.js';
import { compileLayout, lineOptions, type LineOptions, type LineOptionsInput } from './options.js';
import { normalizeReport } from './report.js';

/** Decodes every report in a capture exactly as the runner would, one DecodedMessage per report. */
export function decodeLineCapture(raw: Buffer, profile: InstrumentProfile, options: LineOptions | LineOptionsInput): DecodedMessage[] {
  const opts = lineOptions(options as LineOptionsInput);
  return assembleCapture(raw, opts).map((r) => normalizeReport(r, profile, opts));
}

/** The reports in a capture. */
export function assembleCapture(raw: Buffer, opts: LineOptions): Report[] {
  const layout = compileLayout(opts);
  const limits = { idleMs: opts.idleMs, maxReportLines: opts.maxReportLines };
  let state: AssemblerState = initialAssemblerState;
  const effects: AssemblerEffect[] = [];
  for (const line of splitLines(raw, Buffer.from(opts.delimiter, 'latin1'))) {
    const step = assemble(state, { kind: 'line', raw: line, text: lineText(line, opts) }, layout, limits);
    state = step.state;
    effects.push(...step.effects);
  }
  effects.push(...assemble(state, { kind: 'idle' }, layout, limits).effects);
  return effects.flatMap((e) => (e.kind === 'report' ? [e.report] : []));
}

/** Lines with their delimiter kept (what parser-readline emits with includeDelimiter), the last one possibly without. */
export function splitLines(raw: Buffer, delimiter: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let from = 0;
  for (let at = raw.indexOf(delimiter, from); at >= 0; at = raw.indexOf(delimiter, from)) {
    lines.push(raw.subarray(from, at + delimiter.length));
    from = at + delimiter.length;
  }
  if (from < raw.length) lines.push(raw.subarray(from));
  return lines;
}

/** A line's text for matching: decoded, without its delimiter or a trailing CR. */
export function lineText(line: Buffer, opts: LineOptions): string {
  const text = line.toString(opts.encoding);
  const withoutDelimiter = text.endsWith(opts.delimiter) ? text.slice(0, -opts.delimiter.length) : text;
  return withoutDelimiter.replace(/\r$/, '');
}
