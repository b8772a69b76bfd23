// How a printing analyzer's bytes become lines, for the runner and for `labgate decode` alike (one rule, so a capture
// decodes as the running gateway read it). Pure and incremental: each chunk costs what its bytes cost, whatever is
// pending, and nothing is held beyond `maxLineBytes`.
//   lines         text up to the delimiter (default LF); a trailing CR is not part of the text.
//   stx-etx-bcc   STX text ETX BCC: one block check character follows ETX and is taken whatever it is (it may itself be
//                 STX or ETX); it is verified, and a record whose check fails is read but marked (its report is then
//                 rejected, never loaded). Bytes between records travel with the next record's raw bytes.

/** How lines are framed on the wire. */
export type FramingConfig =
  { kind: 'lines'; delimiter: Buffer; maxLineBytes: number } | { kind: 'stx-etx-bcc'; maxLineBytes: number; bcc: 'xor' | 'sum'; bccIncludesStx: boolean };

/** One line: every byte it arrived with (`raw`, journaled as is), its text bytes, and what is wrong with it, if anything. */
export interface FramedLine {
  raw: Buffer;
  text: Buffer;
  problem?: string;
}

export type FramingEvent = { kind: 'line'; line: FramedLine } | { kind: 'too-long'; bytes: number } | { kind: 'stray'; bytes: number };

/** Bytes held between chunks: the pieces of the line (or record) in progress. */
export interface FramingState {
  parts: Buffer[];
  size: number;
  /** Set while the rest of a line over the limit is skipped; the bytes skipped so far. */
  skipped: number | null;
  /** Record framing: where in the record the next byte falls, and where its text starts among the bytes held. */
  phase: 'outside' | 'text' | 'bcc';
  textFrom: number;
}

/** Nothing held. A fresh object each time: a state's pieces are reused as it is consumed. */
export function initialFramingState(): FramingState {
  return { parts: [], size: 0, skipped: null, phase: 'outside', textFrom: 0 };
}

const STX = 0x02;
const ETX = 0x03;

/** Feeds one chunk; the given state is consumed (its pieces are reused, so a long line costs no copying per chunk). */
export function frameStep(state: FramingState, chunk: Buffer, config: FramingConfig): { state: FramingState; events: FramingEvent[] } {
  const s: FramingState = { ...state };
  const events: FramingEvent[] = [];
  if (config.kind === 'lines') splitLines(s, chunk, config, events);
  else splitRecords(s, chunk, config, events);
  return { state: s, events };
}

/** The end of the input (end of a capture, or the analyzer fell silent): what is pending is complete as it is. */
export function frameEnd(state: FramingState, config: FramingConfig): FramingEvent[] {
  if (state.skipped !== null) return [{ kind: 'too-long', bytes: state.skipped }];
  if (state.size === 0) return [];
  const raw = Buffer.concat(state.parts, state.size);
  if (config.kind === 'lines') return [{ kind: 'line', line: { raw, text: raw } }];
  if (state.phase === 'outside') return [{ kind: 'stray', bytes: state.size }];
  const text = raw.subarray(state.textFrom, state.phase === 'bcc' ? raw.length - 1 : raw.length);
  return [{ kind: 'line', line: { raw, text, problem: state.phase === 'bcc' ? 'record has no block check character' : 'record has no ETX' } }];
}

function splitLines(s: FramingState, chunk: Buffer, config: Extract<FramingConfig, { kind: 'lines' }>, events: FramingEvent[]): void {
  const d = config.delimiter;
  let from = straddle(s, chunk, d, config, events);
  for (let at = chunk.indexOf(d, from); at >= 0; at = chunk.indexOf(d, from)) {
    finishLine(s, chunk.subarray(from, at + d.length), d.length, config.maxLineBytes, events);
    from = at + d.length;
  }
  // A delimiter may begin in this chunk and end in the next: allow for its first bytes beyond the limit.
  hold(s, chunk.subarray(from), config.maxLineBytes + d.length - 1);
}

// A multi-byte delimiter split across chunks: look at the held tail and the chunk's head only.
function straddle(s: FramingState, chunk: Buffer, d: Buffer, config: Extract<FramingConfig, { kind: 'lines' }>, events: FramingEvent[]): number {
  if (d.length < 2 || s.size === 0 || s.skipped !== null) return 0;
  const tail = lastBytes(s.parts, d.length - 1);
  const at = Buffer.concat([tail, chunk.subarray(0, d.length - 1)]).indexOf(d);
  if (at < 0 || at >= tail.length) return 0;
  const end = at + d.length - tail.length;
  finishLine(s, chunk.subarray(0, end), d.length, config.maxLineBytes, events);
  return end;
}

// The last `n` bytes held, gathered from the last pieces only.
function lastBytes(parts: readonly Buffer[], n: number): Buffer {
  const pieces: Buffer[] = [];
  let size = 0;
  for (let i = parts.length - 1; i >= 0 && size < n; i -= 1) {
    pieces.unshift(parts[i]!);
    size += parts[i]!.length;
  }
  const joined = Buffer.concat(pieces, size);
  return joined.subarray(Math.max(0, size - n));
}

function finishLine(s: FramingState, last: Buffer, delimiterBytes: number, max: number, events: FramingEvent[]): void {
  if (s.skipped !== null) {
    events.push({ kind: 'too-long', bytes: s.skipped + last.length });
  } else {
    const raw = s.size === 0 ? last : Buffer.concat([...s.parts, last], s.size + last.length);
    const text = raw.subarray(0, raw.length - delimiterBytes);
    events.push(text.length > max ? { kind: 'too-long', bytes: raw.length } : { kind: 'line', line: { raw, text } });
  }
  [s.parts, s.size, s.skipped] = [[], 0, null];
}

// Keeps bytes of the line in progress, or counts them once the line is over the limit (a babbling port never grows memory).
function hold(s: FramingState, piece: Buffer, limit: number): void {
  if (piece.length === 0) return;
  if (s.skipped !== null) s.skipped += piece.length;
  else if (s.size + piece.length > limit) [s.parts, s.size, s.skipped] = [[], 0, s.size + piece.length];
  else {
    s.parts.push(piece);
    s.size += piece.length;
  }
}

function splitRecords(s: FramingState, chunk: Buffer, config: Extract<FramingConfig, { kind: 'stx-etx-bcc' }>, events: FramingEvent[]): void {
  let from = 0;
  while (from < chunk.length) {
    if (s.phase === 'bcc') {
      // Whatever byte follows ETX is the check character, even an STX or an ETX.
      take(s, chunk.subarray(from, from + 1));
      from += 1;
      finishRecord(s, config, events);
      continue;
    }
    const at = chunk.indexOf(s.phase === 'outside' ? STX : ETX, from);
    const end = at < 0 ? chunk.length : at + 1;
    take(s, chunk.subarray(from, end));
    from = end;
    if (at >= 0) {
      if (s.phase === 'outside') s.textFrom = s.size;
      s.phase = s.phase === 'outside' ? 'text' : 'bcc';
    } else if (s.phase === 'outside' && s.size > config.maxLineBytes) {
      events.push({ kind: 'stray', bytes: s.size });
      [s.parts, s.size] = [[], 0];
    } else if (s.phase === 'text' && s.skipped === null && s.size - s.textFrom > config.maxLineBytes) {
      // Over the limit: the rest of the record, up to its ETX and check character, is counted, not kept.
      [s.parts, s.size, s.skipped] = [[], 0, s.size];
    }
  }
}

function take(s: FramingState, piece: Buffer): void {
  if (piece.length === 0) return;
  if (s.skipped !== null) {
    s.skipped += piece.length;
    return;
  }
  s.parts.push(piece);
  s.size += piece.length;
}

function finishRecord(s: FramingState, config: Extract<FramingConfig, { kind: 'stx-etx-bcc' }>, events: FramingEvent[]): void {
  const raw = Buffer.concat(s.parts, s.size);
  const text = raw.subarray(s.textFrom, raw.length - 2);
  if (s.skipped !== null || text.length > config.maxLineBytes) {
    events.push({ kind: 'too-long', bytes: s.skipped ?? raw.length });
  } else {
    const sent = raw[raw.length - 1]!;
    const expected = blockCheck(raw.subarray(config.bccIncludesStx ? s.textFrom - 1 : s.textFrom, raw.length - 1), config.bcc);
    const problem = sent === expected ? undefined : `block check character ${hex(sent)} is not ${hex(expected)}`;
    events.push({ kind: 'line', line: problem === undefined ? { raw, text } : { raw, text, problem } });
  }
  [s.parts, s.size, s.skipped, s.phase] = [[], 0, null, 'outside'];
}

/** The block check over `bytes` (text and ETX, and STX when configured): XOR (ISO 1155 LRC) or the sum modulo 256. */
export function blockCheck(bytes: Uint8Array, algorithm: 'xor' | 'sum'): number {
  let check = 0;
  for (const b of bytes) check = algorithm === 'xor' ? check ^ b : (check + b) & 0xff;
  return check;
}

function hex(byte: number): string {
  return `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}
