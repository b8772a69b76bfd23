import { describe, expect, test } from 'vitest';
import { assemble, initialAssemblerState, type AssemblerEffect } from '../../drivers/line/assembler.js';
import { decodeLineCapture } from '../../drivers/line/decode.js';
import { compileLayout, lineOptions, lineOptionsSchema } from '../../drivers/line/options.js';
import { bytes } from '../hl7/mnemonic.js';
import { clinitekReport, loadLayout, spotchemReport } from './layouts.js';

describe('shipped layouts', () => {
  test('SPOTCHEM EL: one line is the whole report; the ETX ends it', () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const decoded = decodeLineCapture(bytes(spotchemReport + spotchemReport.replace('24K0231', '24K0232')), profile, options);
    expect(decoded).toHaveLength(2);
    expect(decoded[0]!.rejections).toEqual([]);
    expect(decoded[0]!.results.map((r) => [r.accession, r.analyteLoinc, r.resultedAt, r.valueText, r.value, r.unit, r.status])).toEqual([
      ['24K0231', '2951-2', '2024-11-05T08:41:00+00:00', '141', 141, 'mmol/L', 'final'],
      ['24K0231', '2823-3', '2024-11-05T08:41:00+00:00', '4.2', 4.2, 'mmol/L', 'final'],
      ['24K0231', '2075-0', '2024-11-05T08:41:00+00:00', '103', 103, 'mmol/L', 'final'],
    ]);
    expect(decoded[1]!.results[0]!.accession).toBe('24K0232');
  });

  test('a code the mapping lacks is rejected with the value and unit the printout gave, for the codes seen', () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const [report] = decodeLineCapture(bytes(spotchemReport), { ...profile, mapping: profile.mapping.filter((m) => m.code !== 'K') }, options);
    expect(report!.rejections).toEqual([
      { reason: "unmapped test code 'K'", analyzerCode: 'K', accession: '24K0231', observed: { value: '4.2', unit: 'mmol/L' } },
    ]);
  });

  test('CLINITEK Status+: fields on later lines, 12-hour clock, flags, qualitative values, idle end', () => {
    const { profile, options } = loadLayout('siemens-clinitek-status.yaml');
    const [report] = decodeLineCapture(bytes(clinitekReport), profile, options);
    expect(report!.rejections).toEqual([]);
    expect(report!.results.map((r) => [r.source.analyzerCode, r.valueText, r.value, r.unit, r.flags])).toEqual([
      ['GLU', 'Negative', null, null, []],
      ['BIL', 'Negative', null, null, []],
      ['KET', 'Trace', null, null, []],
      ['SG', '1.025', 1.025, null, []],
      ['BLO', 'Negative', null, null, []],
      ['pH', '6.0', 6, null, []],
      ['PRO', '100', 100, 'mg/dL', ['*']],
      ['URO', '0.2', 0.2, 'E.U./dL', []],
      ['NIT', 'Negative', null, null, []],
      ['LEU', 'Small', null, null, ['*']],
    ]);
    expect(new Set(report!.results.map((r) => `${r.accession} ${r.resultedAt}`))).toEqual(new Set(['U24-0311 2024-10-29T18:08:00+00:00']));
  });

  test('a report time in the spring gap is rejected with a reason, never shifted', () => {
    const { profile, options } = loadLayout('arkray-spotchem-el.yaml');
    const [report] = decodeLineCapture(bytes(spotchemReport.replace('24/11/05 09:41', '25/03/30 02:30')), profile, options);
    expect(report!.results).toEqual([]);
    expect(report!.rejections.map((r) => r.reason)).toEqual(Array(3).fill(expect.stringMatching(/does not exist in Europe\/Vienna/)));
  });

  test('no accession, no time: rejected rather than invented', () => {
    const { profile, options } = loadLayout('siemens-clinitek-status.yaml');
    const [report] = decodeLineCapture(bytes(clinitekReport.replace('Patient ID: U24-0311', 'Patient ID:')), profile, options);
    expect(report!.results).toEqual([]);
    expect(report!.rejections[0]!.reason).toMatch(/no accession/);
  });
});

describe('assembler', () => {
  const options = lineOptions({
    start: '^START (?<accession>\\w+) (?<year>\\d{4})-(?<month>\\d\\d)-(?<day>\\d\\d) (?<hour>\\d\\d):(?<minute>\\d\\d)',
    result: '^(?<code>[A-Z]+)=(?<value>\\S+)',
    end: '^END',
    idleMs: 1000,
    maxReportLines: 4,
  });
  const layout = compileLayout(options);
  const limits = { idleMs: 1000, maxReportLines: 4 };
  const run = (inputs: ({ line: string } | 'idle')[]) => {
    let state = initialAssemblerState;
    const effects: AssemblerEffect[] = [];
    for (const i of inputs) {
      const input = i === 'idle' ? ({ kind: 'idle' } as const) : ({ kind: 'line', raw: Buffer.from(`${i.line}\n`), text: i.line } as const);
      const step = assemble(state, input, layout, limits);
      state = step.state;
      effects.push(...step.effects);
    }
    return {
      state,
      effects: effects.map((e) => (e.kind === 'report' ? { kind: 'report', codes: e.report.results.map((r) => r.code), raw: e.report.raw.toString() } : e)),
    };
  };

  test.each([
    {
      name: 'end line closes',
      inputs: [{ line: 'START A1 2024-01-02 03:04' }, { line: 'NA=140' }, { line: 'END' }],
      want: [
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'report', codes: ['NA'], raw: 'START A1 2024-01-02 03:04\nNA=140\nEND\n' },
      ],
    },
    {
      name: 'idle closes',
      inputs: [{ line: 'START A1 2024-01-02 03:04' }, { line: 'K=4' }, 'idle' as const],
      want: [
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'report', codes: ['K'], raw: 'START A1 2024-01-02 03:04\nK=4\n' },
      ],
    },
    {
      name: 'a new start closes the open report',
      inputs: [{ line: 'START A1 2024-01-02 03:04' }, { line: 'K=4' }, { line: 'START A2 2024-01-02 03:05' }],
      want: [
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'report', codes: ['K'], raw: 'START A1 2024-01-02 03:04\nK=4\n' },
        { kind: 'arm-idle', ms: 1000 },
      ],
    },
    { name: 'lines outside a report are stray', inputs: [{ line: 'K=4' }, 'idle' as const], want: [{ kind: 'stray', bytes: 4 }] },
    {
      name: 'the line limit closes a report',
      inputs: [{ line: 'START A1 2024-01-02 03:04' }, { line: 'A=1' }, { line: 'B=2' }, { line: 'C=3' }],
      want: [
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'arm-idle', ms: 1000 },
        { kind: 'report', codes: ['A', 'B', 'C'], raw: 'START A1 2024-01-02 03:04\nA=1\nB=2\nC=3\n' },
      ],
    },
  ])('$name', ({ inputs, want }) => {
    expect(run(inputs).effects).toEqual(want);
  });
});

describe('options', () => {
  test.each([
    [{ start: '^S', result: '(?<code>\\w+)=(?<value>\\S+)' }, /needs an end/],
    [{ start: '^S', result: '(?<code>\\w+)', end: 'E' }, /missing named group 'value'/],
    [{ start: '^S(?<patient>\\w+)', result: '(?<code>\\w+)=(?<value>\\S+)', end: 'E' }, /unknown named group 'patient'/],
    [{ start: '^S(', result: '(?<code>\\w+)=(?<value>\\S+)', end: 'E' }, /not a regular expression/],
    [{ start: '^S', result: '(?<code>\\w+)=(?<value>\\S+)', end: 'E', endd: 1 }, /unrecognized key/i],
  ])('%j is refused', (input, message) => {
    const r = lineOptionsSchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.message).join('\n')).toMatch(message);
  });
});
