// The detection state machine, pure: a few transitions by hand, then the whole search against every sender setting,
// the analyzer's bursts going through the software UART at whatever setting the detector listens at.
import { describe, expect, it } from 'vitest';
import { startDetector, stepDetector, type DetectorEffect, type DetectorOptions, type DetectorState } from '../../src/detect/detector.js';
import { describeFinding } from '../../src/detect/finding.js';
import { candidateSettings, sameSetting, settingLabel, type DetectionScope, type SerialSetting } from '../../src/detect/setting.js';
import { expected, samples, type SampleName } from './samples.js';
import { reframe } from './uart.js';

const auto: DetectionScope = { baudRate: 'auto', dataBits: 'auto', parity: 'auto' };
const options = (scope: DetectionScope = auto): DetectorOptions => ({
  candidates: candidateSettings(scope),
  scope,
  gapMs: 300,
  silenceMs: 30_000,
  maxBurstBytes: 4096,
});
const s = (baudRate: number, dataBits: 7 | 8 = 8, parity: SerialSetting['parity'] = 'none'): SerialSetting => ({ baudRate, dataBits, parity });

function listening(o: DetectorOptions, at = 0): DetectorState {
  const first = startDetector(o);
  return stepDetector(first.state, { kind: 'opened', at }, o).state;
}

describe('detector transitions', () => {
  it('starts by opening 9600 8N1, then waits out the silence window', () => {
    const o = options();
    const first = startDetector(o);
    expect(first.effects).toEqual([{ kind: 'open', setting: s(9600) }]);
    const opened = stepDetector(first.state, { kind: 'opened', at: 1_000 }, o);
    expect(opened.state.phase).toBe('listening');
    expect(opened.effects).toEqual([{ kind: 'wake', at: 31_000 }]);
  });

  it('judges a burst after the gap: noise moves on to the next rate and says why', () => {
    const o = options();
    let step = stepDetector(listening(o), { kind: 'bytes', data: Buffer.from([0xfe]), at: 5_000 }, o);
    expect(step.effects).toEqual([{ kind: 'wake', at: 5_300 }]);
    step = stepDetector(step.state, { kind: 'timer', at: 5_300 }, o);
    expect(step.effects).toEqual([{ kind: 'open', setting: s(19200) }]);
    expect(step.state.trials).toEqual([{ setting: s(9600), at: 5_000, outcome: 'noise', why: '1 of 1 bytes have the high bit set' }]);
  });

  it('leaves a silent setting after the window, and waits longer each round', () => {
    const o = options({ baudRate: 9600, dataBits: 'auto', parity: 'auto' });
    let state = listening(o);
    state = stepDetector(state, { kind: 'timer', at: 30_000 }, o).state;
    expect(state).toMatchObject({ phase: 'opening', setting: s(9600, 7, 'even'), cycle: 0 });
    state = stepDetector(state, { kind: 'opened', at: 30_000 }, o).state;
    const wrapped = stepDetector(state, { kind: 'timer', at: 60_000 }, o);
    expect(wrapped.state).toMatchObject({ phase: 'opening', setting: s(9600), cycle: 1 });
    expect(stepDetector(wrapped.state, { kind: 'opened', at: 60_000 }, o).effects).toEqual([{ kind: 'wake', at: 120_000 }]);
  });

  it('finds ASTM on an ENQ and measures the interval from the next', () => {
    const o = options();
    let state = listening(o);
    for (const at of [2_000, 12_000, 22_000]) {
      state = stepDetector(state, { kind: 'bytes', data: Buffer.from([0x05]), at }, o).state;
      state = stepDetector(state, { kind: 'timer', at: at + 300 }, o).state;
    }
    expect(state.phase).toBe('found');
    const finding = describeFinding(state, '/dev/labgate/port3', o.candidates.length, 'auto');
    expect(finding.summary).toBe('ASTM at 9600 8N1: ENQ every 10 s');
    expect(finding.yaml).toEqual([
      'driver: astm',
      'transport:',
      '  kind: serial',
      '  path: "/dev/labgate/port3"',
      '  baudRate: 9600',
      '  dataBits: 8',
      '  parity: none',
    ]);
    expect(finding.note).toContain('7E1 reads these bytes the same way');
  });

  it('moves to 7E1 when bit 7 carries even parity, and finds it there', () => {
    const o = options();
    let step = stepDetector(listening(o), { kind: 'bytes', data: Buffer.from([0x84]), at: 1_000 }, o);
    step = stepDetector(step.state, { kind: 'timer', at: 1_300 }, o);
    expect(step.effects).toEqual([{ kind: 'open', setting: s(9600, 7, 'even') }]);
    expect(step.state.trials[0]?.why).toBe('bit 7 is a parity bit: trying 9600 7E1');
  });

  it('refuses a 7-bit reading when the configuration fixes 8 data bits', () => {
    const o = options({ baudRate: 'auto', dataBits: 8, parity: 'auto' });
    let step = stepDetector(listening(o), { kind: 'bytes', data: Buffer.from([0x84]), at: 1_000 }, o);
    step = stepDetector(step.state, { kind: 'timer', at: 1_300 }, o);
    expect(step.effects).toEqual([{ kind: 'open', setting: s(19200) }]);
    expect(step.state.trials[0]?.why).toBe('reads as 7E1, which the configuration rules out');
  });

  it('gives a finding up after three bursts in a row that make no sense', () => {
    const o = options();
    let state = listening(o);
    const burst = (data: number[], at: number): void => {
      state = stepDetector(state, { kind: 'bytes', data: Buffer.from(data), at }, o).state;
      state = stepDetector(state, { kind: 'timer', at: at + 300 }, o).state;
    };
    burst([0x05], 1_000);
    burst([0xfe], 2_000);
    burst([0xfe], 3_000);
    expect(state.phase).toBe('found');
    burst([0xfe], 4_000);
    expect(state).toMatchObject({ phase: 'opening', setting: s(19200) });
  });
});

/** Runs the detector against an analyzer sending `sample` every `everyMs` at `sender`; returns the state it ends in. */
function search(sample: Buffer, sender: SerialSetting, everyMs: number, o: DetectorOptions, phase: number): { state: DetectorState; at: number } {
  let { state, effects } = startDetector(o);
  let wake: number | null = null;
  let now = 0;
  let nextBurst = 1_234;
  let sends = 0;
  // The port opens at once; bytes sent while the detector is between settings are lost, as on a closed port.
  const apply = (list: readonly DetectorEffect[]): void => {
    for (const e of list) {
      if (e.kind === 'wake') {
        wake = e.at;
        continue;
      }
      wake = null;
      const opened = stepDetector(state, { kind: 'opened', at: now }, o);
      state = opened.state;
      apply(opened.effects);
    }
  };
  apply(effects);
  while (now < 4 * 3_600_000) {
    if (state.phase === 'found' && 'observations' in state && state.observations.length >= 2) return { state, at: now };
    if (wake !== null && wake <= nextBurst) {
      now = wake;
      wake = null;
      ({ state, effects } = stepDetector(state, { kind: 'timer', at: now }, o));
    } else {
      now = nextBurst;
      nextBurst += everyMs;
      sends++;
      const read = reframe(sample, sender, state.setting, { phase: (phase + sends * 0.37) % 1 });
      if (read.length === 0) continue;
      ({ state, effects } = stepDetector(state, { kind: 'bytes', data: read, at: now }, o));
    }
    apply(effects);
  }
  return { state, at: now };
}

describe('the whole search', () => {
  const all = candidateSettings(auto);
  const senders = [...all, ...all.filter((x) => x.dataBits === 7).map((x) => ({ ...x, parity: 'odd' as const }))];
  const cases: [SampleName, number][] = [
    ['enq', 10_000],
    ['hl7', 30_000],
    ['printer', 45_000],
    ['stxEtx', 20_000],
    ['bareAstm', 15_000],
  ];

  it.each(cases)("%s every %i ms: found at the sender's own setting, for every rate and format", (name, everyMs) => {
    const o = options();
    const times: number[] = [];
    for (const sender of senders) {
      const { state, at } = search(samples[name], sender, everyMs, o, 0.3);
      expect(state.phase, `${name} from ${settingLabel(sender)}`).toBe('found');
      if (state.phase !== 'found') continue;
      const finding = describeFinding(state, '/dev/x', o.candidates.length, 'auto');
      // ENQ alone cannot tell 8N1 from 7E1 (its parity bit is 0): the finding says so and keeps 8N1.
      const ambiguous = name === 'enq' && sender.dataBits === 7 && sender.parity === 'even';
      expect(
        sameSetting(state.setting, ambiguous ? { ...sender, dataBits: 8, parity: 'none' } : sender),
        `${name} from ${settingLabel(sender)}: ${finding.summary}`,
      ).toBe(true);
      expect(state.observations.at(-1)?.recognition).toMatchObject(expected[name]);
      if (ambiguous) expect(finding.note).toContain('7E1 reads these bytes the same way');
      times.push(at);
    }
    // Simulated time: each setting before the right one costs about one of the sender's intervals (its burst is judged
    // noise) or one silence window, and the finding needs a second burst: 16 settings, two more bursts, some lost
    // while the port reopens. (enq: 12 to 92 s, printer every 45 s: 47 to 767 s.)
    expect(Math.max(...times)).toBeLessThan(20 * everyMs);
  });

  it('finds an ENQ sender at 7E1 once it gives up a session with EOT', () => {
    const o = options();
    const { state } = search(Buffer.from([0x04, 0x05]), s(19200, 7, 'even'), 15_000, o, 0.6);
    expect(state).toMatchObject({ phase: 'found', setting: s(19200, 7, 'even') });
  });
});
