// Passive detection as a pure state machine: (state, input) → (state, effects), time arriving as input. It listens at
// one setting at a time, judges each burst (burst.ts), and moves to the next setting on noise or on silence; a burst
// that makes sense under the current setting is a finding, kept and refined by every later burst. It has no effect
// that writes: an analyzer that is never answered keeps its results and repeats itself (LIS01-A2 8.2.3, 8.5.1).
import { judgeBurst, type Formats, type Recognition } from './burst.js';
import { sameSetting, settingLabel, type DetectionScope, type SerialSetting } from './setting.js';

/** Timing of the search. */
export interface DetectorOptions {
  /** Settings in trial order. */
  candidates: readonly SerialSetting[];
  /** What the configuration leaves open: a 7-bit variant found from bit 7 is tried only within it. */
  scope: DetectionScope;
  /** Silence that ends a burst. */
  gapMs: number;
  /** A setting where nothing arrives this long is left for the next; doubled each cycle, up to four times. */
  silenceMs: number;
  /** A burst this long is judged without waiting for its end. */
  maxBurstBytes: number;
}

export const defaultDetectorTiming = { gapMs: 300, silenceMs: 30_000, maxBurstBytes: 4096 } as const;

/** What one setting showed the last time it was tried. */
export interface Trial {
  setting: SerialSetting;
  at: number;
  outcome: 'noise' | 'silence' | 'recognized';
  why: string;
}

/** A burst that made sense, at its first byte. */
export interface Observation {
  at: number;
  recognition: Recognition;
}

interface Burst {
  chunks: Buffer[];
  size: number;
  firstAt: number;
  lastAt: number;
}

interface Common {
  setting: SerialSetting;
  /** Position in the candidates the search goes on from. */
  index: number;
  cycle: number;
  trials: readonly Trial[];
}

export type DetectorState =
  | (Common & { phase: 'opening' })
  | (Common & { phase: 'listening'; since: number; burst: Burst | null })
  | (Common & { phase: 'found'; burst: Burst | null; observations: readonly Observation[]; formats: Formats; noiseInARow: number });

export type DetectorInput = { kind: 'opened'; at: number } | { kind: 'bytes'; data: Buffer; at: number } | { kind: 'timer'; at: number };

/** `open`: close the port and open it at this setting, then feed `opened`. `wake`: feed `timer` at this time. */
export type DetectorEffect = { kind: 'open'; setting: SerialSetting } | { kind: 'wake'; at: number };

type Step = { state: DetectorState; effects: DetectorEffect[] };

/** Observations kept to measure the sender's interval. */
const KEEP_OBSERVATIONS = 12;
/** Bursts in a row that make no sense before a finding is given up (the analyzer was reconfigured or swapped). */
const LOSE_AFTER = 3;

/** The first state and its effect: open the first candidate. */
export function startDetector(o: DetectorOptions): Step {
  const setting = o.candidates[0];
  if (!setting) throw new RangeError('detection needs at least one candidate setting');
  return { state: { phase: 'opening', setting, index: 0, cycle: 0, trials: [] }, effects: [{ kind: 'open', setting }] };
}

/** One input. */
export function stepDetector(s: DetectorState, input: DetectorInput, o: DetectorOptions): Step {
  if (input.kind === 'opened') return opened(s, input.at, o);
  if (s.phase === 'opening') return { state: s, effects: [] };
  if (input.kind === 'bytes') {
    const burst = grow(s.burst, input.data, input.at);
    if (burst.size >= o.maxBurstBytes) return judge({ ...s, burst: null }, burst, o);
    return { state: { ...s, burst }, effects: [{ kind: 'wake', at: input.at + o.gapMs }] };
  }
  const at = input.at;
  if (s.burst && at - s.burst.lastAt >= o.gapMs) return judge({ ...s, burst: null }, s.burst, o);
  if (s.burst) return { state: s, effects: [{ kind: 'wake', at: s.burst.lastAt + o.gapMs }] };
  if (s.phase === 'listening') {
    const silence = silenceFor(s.cycle, o);
    if (at - s.since >= silence) return next(s, { setting: s.setting, at, outcome: 'silence', why: `nothing arrived in ${Math.round(silence / 1000)} s` }, o);
    return { state: s, effects: [{ kind: 'wake', at: s.since + silence }] };
  }
  return { state: s, effects: [] };
}

function opened(s: DetectorState, at: number, o: DetectorOptions): Step {
  if (s.phase === 'found') return { state: { ...s, burst: null }, effects: [] };
  const state: DetectorState = { phase: 'listening', setting: s.setting, index: s.index, cycle: s.cycle, trials: s.trials, since: at, burst: null };
  return { state, effects: [{ kind: 'wake', at: at + silenceFor(s.cycle, o) }] };
}

function judge(s: Exclude<DetectorState, { phase: 'opening' }>, burst: Burst, o: DetectorOptions): Step {
  const verdict = judgeBurst(Buffer.concat(burst.chunks, burst.size), s.setting.dataBits);
  const at = burst.firstAt;
  if (verdict.kind === 'noise') {
    if (s.phase === 'listening') return next(s, { setting: s.setting, at, outcome: 'noise', why: verdict.why }, o);
    if (s.noiseInARow + 1 < LOSE_AFTER) return { state: { ...s, noiseInARow: s.noiseInARow + 1 }, effects: [] };
    return next(s, { setting: s.setting, at, outcome: 'noise', why: `lost: ${verdict.why}` }, o);
  }
  const target = settingFor(verdict.formats, s.setting, o.scope);
  if (target === null) {
    const why = `reads as ${formatNames(verdict.formats)}, which the configuration rules out`;
    if (s.phase === 'found' && s.noiseInARow + 1 < LOSE_AFTER) return { state: { ...s, noiseInARow: s.noiseInARow + 1 }, effects: [] };
    return next(s, { setting: s.setting, at, outcome: 'noise', why }, o);
  }
  const observation = { at, recognition: verdict.recognition };
  if (!sameSetting(target, s.setting)) {
    // Bit 7 carried a 7-bit sender's parity: listen again with the UART taking it off (it is judged there anew).
    const trial: Trial = { setting: s.setting, at, outcome: 'recognized', why: `bit 7 is a parity bit: trying ${settingLabel(target)}` };
    return {
      state: { phase: 'opening', setting: target, index: s.index, cycle: s.cycle, trials: record(s.trials, trial) },
      effects: [{ kind: 'open', setting: target }],
    };
  }
  const trial: Trial = { setting: s.setting, at, outcome: 'recognized', why: 'makes sense' };
  if (s.phase === 'listening') {
    const state: DetectorState = {
      phase: 'found',
      setting: s.setting,
      index: s.index,
      cycle: s.cycle,
      trials: record(s.trials, trial),
      burst: null,
      observations: [observation],
      formats: verdict.formats,
      noiseInARow: 0,
    };
    return { state, effects: [] };
  }
  const formats = {
    '8N1': s.formats['8N1'] && verdict.formats['8N1'],
    '7E1': s.formats['7E1'] && verdict.formats['7E1'],
    '7O1': s.formats['7O1'] && verdict.formats['7O1'],
  };
  return {
    state: { ...s, trials: record(s.trials, trial), observations: [...s.observations, observation].slice(-KEEP_OBSERVATIONS), formats, noiseInARow: 0 },
    effects: [],
  };
}

// The setting the bytes fit: the current one when its format is among theirs, else the 7-bit variant at this rate.
function settingFor(formats: Formats, current: SerialSetting, scope: DetectionScope): SerialSetting | null {
  if (formats[formatOf(current)]) return current;
  const parity = formats['7E1'] ? 'even' : formats['7O1'] ? 'odd' : null;
  if (parity === null) return null;
  const allowed = (scope.dataBits === 'auto' || scope.dataBits === 7) && (scope.parity === 'auto' || scope.parity === parity);
  return allowed ? { baudRate: current.baudRate, dataBits: 7, parity } : null;
}

function next(s: Exclude<DetectorState, { phase: 'opening' }>, trial: Trial, o: DetectorOptions): Step {
  const wraps = s.index + 1 >= o.candidates.length;
  const index = wraps ? 0 : s.index + 1;
  const setting = o.candidates[index]!;
  const state: DetectorState = { phase: 'opening', setting, index, cycle: s.cycle + (wraps ? 1 : 0), trials: record(s.trials, trial) };
  return { state, effects: [{ kind: 'open', setting }] };
}

function silenceFor(cycle: number, o: DetectorOptions): number {
  return o.silenceMs * 2 ** Math.min(cycle, 2);
}

function grow(burst: Burst | null, data: Buffer, at: number): Burst {
  if (burst === null) return { chunks: [data], size: data.length, firstAt: at, lastAt: at };
  return { chunks: [...burst.chunks, data], size: burst.size + data.length, firstAt: burst.firstAt, lastAt: at };
}

// One line per setting, newest verdict kept.
function record(trials: readonly Trial[], trial: Trial): Trial[] {
  return [...trials.filter((t) => !sameSetting(t.setting, trial.setting)), trial];
}

/** `8N1`, `7E1` or `7O1` of a setting. */
export function formatOf(s: SerialSetting): keyof Formats {
  return s.dataBits === 8 ? '8N1' : s.parity === 'odd' ? '7O1' : '7E1';
}

function formatNames(f: Formats): string {
  return (Object.keys(f) as (keyof Formats)[]).filter((k) => f[k]).join(' or ');
}
