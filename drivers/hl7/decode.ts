// `labgate decode` for HL7: a capture is split with the instrument's configured framing (MLLP blocks, or bare segments
// with `framing: none`), exactly as the runner splits the same bytes, never guessed from what they hold.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { decodeHl7Message } from './message.js';
import { framingFlush, framingStep, initialFramingState, unfinished } from './framing.js';
import { hl7Options, type Hl7Options, type Hl7OptionsInput } from './options.js';

/** Decodes every message in a capture exactly as the runner would, one DecodedMessage per message. */
export function decodeHl7Capture(raw: Buffer, profile: InstrumentProfile, options: Hl7Options | Hl7OptionsInput = {}): DecodedMessage[] {
  const opts = hl7Options(options);
  return splitHl7Capture(raw, opts).map((m) =>
    m.kind === 'message' ? decodeHl7Message(m.raw, profile, opts).decoded : { results: [], rejections: [{ reason: m.reason }] },
  );
}

export type CapturePart = { kind: 'message'; raw: Buffer } | { kind: 'refused'; reason: string };

/** Splits a capture into message payloads with the configured framing; what the runner would refuse is said. */
export function splitHl7Capture(raw: Buffer, options: Pick<Hl7Options, 'framing' | 'maxMessageBytes'>): CapturePart[] {
  const maxBytes = options.maxMessageBytes;
  if (raw.toString('latin1').trim() === '') return [];
  const step = framingStep(initialFramingState(options.framing), raw, maxBytes);
  // The end of a capture is the analyzer falling silent.
  const end = framingFlush(step.state);
  const parts: CapturePart[] = [];
  let noise = 0;
  for (const e of [...step.effects, ...end.effects]) {
    if (e.kind === 'message') parts.push({ kind: 'message', raw: e.raw });
    else if (e.kind === 'oversize') parts.push({ kind: 'refused', reason: `message of ${e.length} bytes exceeds maxMessageBytes ${maxBytes}` });
    else if (e.kind === 'truncated') parts.push({ kind: 'refused', reason: `MLLP block of ${e.length} bytes cut short by a new block` });
    else noise += e.count;
  }
  const open = unfinished(end.state);
  if (open !== undefined) parts.push({ kind: 'refused', reason: open });
  if (noise > 0) parts.push({ kind: 'refused', reason: `${noise} bytes outside any MLLP block ignored (the instrument's framing is ${options.framing})` });
  return parts;
}
