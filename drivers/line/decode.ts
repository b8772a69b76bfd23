// `labgate decode` for printed reports: the capture is framed into lines exactly as the runner frames the wire (one
// framing module, the same line limit), and its end counts as the idle gap (a capture ends when the analyzer fell
// silent).
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { assemble, initialAssemblerState, type AssemblerEffect, type AssemblerInput, type AssemblerState, type Report } from './assembler.js';
import { frameEnd, frameStep, initialFramingState, type FramedLine, type FramingEvent } from './framing.js';
import { compileLayout, framingOf, lineOptions, type LineOptions, type LineOptionsInput } from './options.js';
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
  const framing = framingOf(opts);
  let state: AssemblerState = initialAssemblerState;
  const effects: AssemblerEffect[] = [];
  const feed = (input: AssemblerInput): void => {
    const step = assemble(state, input, layout, limits);
    state = step.state;
    effects.push(...step.effects);
  };
  const { state: framed, events } = frameStep(initialFramingState(), raw, framing);
  for (const input of assemblerInputs([...events, ...frameEnd(framed, framing)], opts)) feed(input);
  feed({ kind: 'idle' });
  return effects.flatMap((e) => (e.kind === 'report' ? [e.report] : []));
}

/** The assembler's inputs for framing events (lines only: over-long lines and stray bytes are the runner's to report). */
export function assemblerInputs(events: readonly FramingEvent[], opts: LineOptions): AssemblerInput[] {
  return events.flatMap((e) => (e.kind === 'line' ? [lineInput(e.line, opts)] : []));
}

/** A framed line as the assembler reads it: its text decoded, without a trailing CR. */
export function lineInput(line: FramedLine, opts: LineOptions): AssemblerInput {
  const text = line.text.toString(opts.encoding).replace(/\r$/, '');
  return line.problem === undefined ? { kind: 'line', raw: line.raw, text } : { kind: 'line', raw: line.raw, text, problem: line.problem };
}
