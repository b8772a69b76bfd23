// Decoding without a store, exactly as the running gateway would: the instrument's configured framing, the
// same link state machine (checksums verified on every frame, retransmissions dropped), the same record
// parser and normalization. The core of `labgate decode`, of reprocessing and of the captures suite.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { DecodedMessage } from '../../src/message.js';
import type { LinkConfig, LinkEffect, LinkInput, LinkState } from './link.js';
import { captureStartState, drive, isBare } from './link.js';
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

/**
 * Decodes a capture into one DecodedMessage per message, with the framing the instrument is configured for
 * (never guessed: bare records read as link bytes are reported, not decoded). Everything the runner would
 * have refused or discarded is a rejection with its reason.
 */
export function decodeAstmCapture(raw: Buffer, profile: InstrumentProfile, options: AstmOptions): DecodedMessage[] {
  const out: DecodedMessage[] = [];
  const problems: string[] = [];
  let noise = 0;
  const reject = (reason: string): void => {
    out.push({ results: [], rejections: [{ reason: withProblems(reason, problems) }] });
    problems.length = 0;
  };
  const handle = (effect: LinkEffect): LinkInput | void => {
    if (effect.kind === 'noise') noise += effect.bytes;
    else if (effect.kind === 'event' && effect.event.kind === 'nak') problems.push(`frame refused: ${effect.event.reason}`);
    else if (effect.kind === 'event' && effect.event.kind === 'discarded') reject(`message discarded: ${effect.event.reason}`);
    else if (effect.kind === 'commit') {
      out.push(decodeAstmText(effect.text, profile, options));
      problems.length = 0;
      return { kind: 'committed', ok: true };
    }
  };
  let state = drive(captureStartState(linkConfigOf(options)), { kind: 'bytes', data: raw }, handle);
  // The end of a capture is the analyzer falling silent.
  if (isBare(state)) state = drive(state, { kind: 'timeout' }, handle);
  else if (openMessage(state) || problems.length > 0) {
    if (state.phase === 'receiving' && state.partial !== null) problems.push('a frame is cut short (no complete trailer)');
    reject('incomplete message at the end of the capture');
  }
  if (noise > 0) reject(`${noise} bytes outside any frame ignored (the instrument's framing is ${options.framing})`);
  return out;
}

function openMessage(state: LinkState): boolean {
  return state.phase === 'receiving' && !isBare(state) && (state.message.frames > 0 || state.partial !== null);
}

function withProblems(reason: string, problems: readonly string[]): string {
  return problems.length ? `${reason} (${[...new Set(problems)].join('; ')})` : reason;
}
