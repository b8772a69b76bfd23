// The instrument's configured framing (options.framing), one interface for the runner and `labgate decode` alike, so a
// capture is split exactly as the running gateway would split the same bytes: never guessed from what they hold.
import { bareFlush, bareIdle, bareStep, initialBareState, type BareEffect, type BareState } from './bare.js';
import { CR, FS, initialMllpState, mllpStep, VT, type MllpEffect, type MllpState } from './mllp.js';

export type Framing = 'mllp' | 'none';

export type FramingState = { kind: 'mllp'; state: MllpState } | { kind: 'none'; state: BareState };

export type FramingEffect = MllpEffect | BareEffect;

/** The state before any byte. */
export function initialFramingState(framing: Framing): FramingState {
  return framing === 'mllp' ? { kind: 'mllp', state: initialMllpState } : { kind: 'none', state: initialBareState };
}

/** Feeds one chunk. */
export function framingStep(s: FramingState, chunk: Buffer, maxBytes: number): { state: FramingState; effects: FramingEffect[] } {
  if (s.kind === 'mllp') {
    const step = mllpStep(s.state, chunk, maxBytes);
    return { state: { kind: 'mllp', state: step.state }, effects: step.effects };
  }
  const step = bareStep(s.state, chunk, maxBytes);
  return { state: { kind: 'none', state: step.state }, effects: step.effects };
}

/** The line fell silent: a bare message under way is complete (an MLLP block is only ever ended by its FS). */
export function framingFlush(s: FramingState): { state: FramingState; effects: FramingEffect[] } {
  if (s.kind === 'mllp') return { state: s, effects: [] };
  const flushed = bareFlush(s.state);
  return { state: { kind: 'none', state: flushed.state }, effects: flushed.effects };
}

/** True when a bare message is under way, so silence must end it. */
export function awaitsSilence(s: FramingState): boolean {
  return s.kind === 'none' && !bareIdle(s.state);
}

/** What is left unfinished at the end of a capture, in words; undefined when nothing is. */
export function unfinished(s: FramingState): string | undefined {
  if (s.kind === 'mllp' && s.state.phase !== 'idle') return `MLLP block of ${s.state.length} bytes never ended`;
  return undefined;
}

/** One encoded message as the framing writes it: an MLLP block, or the bare segments. */
export function frameFor(framing: Framing, payload: Buffer): Buffer {
  return framing === 'mllp' ? Buffer.concat([Buffer.from([VT]), payload, Buffer.from([FS, CR])]) : payload;
}
