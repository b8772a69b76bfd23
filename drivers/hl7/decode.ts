// `labgate decode` for HL7: a capture is MLLP blocks or bare segments; this tells them apart.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { decodeHl7Message } from './message.js';
import { initialMllpState, mllpStep, VT } from './mllp.js';
import { hl7Options, type Hl7Options, type Hl7OptionsInput } from './options.js';

/** Decodes every message in a capture exactly as the runner would, one DecodedMessage per message. */
export function decodeHl7Capture(raw: Buffer, profile: InstrumentProfile, options: Hl7Options | Hl7OptionsInput = {}): DecodedMessage[] {
  const opts = hl7Options(options);
  return splitHl7Capture(raw, opts.maxMessageBytes).map((m) =>
    m.kind === 'message' ? decodeHl7Message(m.raw, profile, opts).decoded : { results: [], rejections: [{ reason: m.reason }] },
  );
}

export type CapturePart = { kind: 'message'; raw: Buffer } | { kind: 'refused'; reason: string };

/** Splits a capture into message payloads: MLLP when it holds a VT, else on each MSH segment. */
export function splitHl7Capture(raw: Buffer, maxBytes: number): CapturePart[] {
  return raw.includes(VT) ? splitMllp(raw, maxBytes) : splitBare(raw);
}

function splitMllp(raw: Buffer, maxBytes: number): CapturePart[] {
  const { state, effects } = mllpStep(initialMllpState, raw, maxBytes);
  const parts: CapturePart[] = [];
  for (const e of effects) {
    if (e.kind === 'message') parts.push({ kind: 'message', raw: e.raw });
    else if (e.kind === 'oversize') parts.push({ kind: 'refused', reason: `message of ${e.length} bytes exceeds maxMessageBytes ${maxBytes}` });
    else if (e.kind === 'truncated') parts.push({ kind: 'refused', reason: `MLLP block of ${e.length} bytes cut short by a new block` });
  }
  if (state.phase !== 'idle') parts.push({ kind: 'refused', reason: `MLLP block of ${state.length} bytes never ended` });
  return parts;
}

// A bare capture: a new message starts at every segment beginning with MSH (2.5.2: segments end in CR).
function splitBare(raw: Buffer): CapturePart[] {
  const text = raw.toString('latin1');
  const starts: number[] = [];
  const re = /(^|[\r\n])MSH/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) starts.push(m.index + m[1]!.length);
  if (starts.length === 0) return text.trim() === '' ? [] : [{ kind: 'message', raw }];
  const parts: CapturePart[] = [];
  if (text.slice(0, starts[0]).trim() !== '') parts.push({ kind: 'message', raw: raw.subarray(0, starts[0]) });
  starts.forEach((start, i) => parts.push({ kind: 'message', raw: raw.subarray(start, starts[i + 1] ?? raw.length) }));
  return parts;
}
