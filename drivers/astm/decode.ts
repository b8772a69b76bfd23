// Decoding without a store, exactly as the running gateway would: the same link state machine (checksums
// verified on every frame, retransmissions dropped), the same record parser and normalization. The core
// of `labgate decode` and of the captures suite.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import { ENQ, STX } from './frame.js';
import type { LinkConfig, LinkEffect, LinkInput, LinkState } from './link.js';
import { drive, initialLinkState } from './link.js';
import { normalizeMessages } from './normalize.js';
import type { AstmOptions } from './options.js';
import { parseRecords } from './records.js';

/** The link layer's part of the options. */
export function linkConfigOf(options: AstmOptions): LinkConfig {
  return { framing: options.framing, maxFrameBytes: options.maxFrameBytes, deviations: options.deviations };
}

/** Decodes one committed message's reassembled text (after checksums passed) in the instrument's charset. */
export function decodeAstmText(text: Buffer, profile: InstrumentProfile, options: AstmOptions): DecodedMessage {
  const decoded = text.toString(options.charset === 'utf8' ? 'utf8' : 'latin1');
  return normalizeMessages(parseRecords(decoded), profile, options);
}

/** True when a capture holds link-layer bytes (ENQ or STX frames) rather than bare records. */
export function isLinkCapture(raw: Buffer): boolean {
  return raw.includes(STX) || raw.includes(ENQ);
}

/** Decodes a capture (link-layer bytes or bare records, detected) into one DecodedMessage per message. */
export function decodeAstmCapture(raw: Buffer, profile: InstrumentProfile, options: AstmOptions): DecodedMessage[] {
  const config: LinkConfig = { ...linkConfigOf(options), framing: isLinkCapture(raw) ? 'link' : 'none' };
  const out: DecodedMessage[] = [];
  const problems: string[] = [];
  // A capture may start mid-session (no ENQ, first frame number unknown): start receiving, accept any number.
  let state: LinkState = config.framing === 'link' ? { ...initialLinkState(config), phase: 'receiving', lastFrameNumber: null } : initialLinkState(config);
  const run = (input: LinkInput): void => {
    state = drive(state, input, handle);
  };
  const handle = (effect: LinkEffect): LinkInput | void => {
    if (effect.kind === 'event' && effect.event.kind === 'nak') problems.push(`frame refused: ${effect.event.reason}`);
    if (effect.kind === 'event' && effect.event.kind === 'discarded') {
      out.push({ results: [], rejections: [{ reason: withProblems(`message discarded: ${effect.event.reason}`, problems) }] });
      problems.length = 0;
    }
    if (effect.kind === 'commit') {
      out.push(decodeAstmText(effect.text, profile, options));
      problems.length = 0;
      return { kind: 'committed', ok: true };
    }
  };
  run({ kind: 'bytes', data: raw });
  if (config.framing === 'none') run({ kind: 'timeout' });
  else if (state.texts.length > 0 || problems.length > 0 || state.buf.includes(STX)) {
    if (state.buf.includes(STX)) problems.push('a frame is cut short (no complete trailer)');
    out.push({ results: [], rejections: [{ reason: withProblems('incomplete message at the end of the capture', problems) }] });
  }
  return out;
}

function withProblems(reason: string, problems: readonly string[]): string {
  return problems.length ? `${reason} (${[...new Set(problems)].join('; ')})` : reason;
}
