// Line driver framings: records framed STX text ETX BCC with the block check verified (it may itself be STX or ETX),
// fixed-column result rows, and the line limit applied alike by the runner and `labgate decode`.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeLineCapture } from '../../drivers/line/decode.js';
import { blockCheck, frameEnd, frameStep, initialFramingState, type FramingConfig, type FramingEvent } from '../../drivers/line/framing.js';
import { lineOptions, lineOptionsSchema } from '../../drivers/line/options.js';
import { createLineRunner } from '../../drivers/line/runner.js';
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { makeContext } from '../hl7/context.js';

const STX = '\u0002';
const ETX = '\u0003';

/** One record: STX text ETX and its check character (XOR over text and ETX, ISO 1745), then CR LF between records. */
function record(text: string, algorithm: 'xor' | 'sum' = 'xor', includeStx = false): string {
  const covered = Buffer.from(`${includeStx ? STX : ''}${text}${ETX}`, 'latin1');
  return `${STX}${text}${ETX}${String.fromCharCode(blockCheck(covered, algorithm))}\r\n`;
}

/** Pads `text` with one character chosen so that its XOR check character is `bcc` (to make it STX or ETX). */
function withCheck(text: string, bcc: number): string {
  const x = blockCheck(Buffer.from(`${text}${ETX}`, 'latin1'), 'xor');
  return text + String.fromCharCode(x ^ bcc);
}

const profile: InstrumentProfile = {
  id: 'lyte-1',
  gatewayId: 'gw-test',
  timezone: '+01:00',
  mapping: [
    { code: 'Na', loinc: '2951-2', unit: 'mmol/L' },
    { code: 'K', loinc: '2823-3', unit: 'mmol/L' },
    { code: 'Cl', loinc: '2075-0', unit: 'mmol/L' },
  ],
};

// One record per line of the report: a header record, one record per analyte, an end record.
const framed = lineOptions({
  framing: 'stx-etx-bcc',
  start: '^SAMPLE (?<accession>\\S+) (?<year>\\d{4})-(?<month>\\d\\d)-(?<day>\\d\\d) (?<hour>\\d\\d):(?<minute>\\d\\d)',
  result: '^(?<code>Na|K|Cl) +(?<value>\\S+) +(?<unit>mmol/L)',
  end: '^END',
});

const report = (id: string, k = 'K   4.2 mmol/L') =>
  [`SAMPLE ${id} 2024-11-05 09:41`, 'Na  141 mmol/L', k, 'Cl  103 mmol/L', 'END'].map((t) => record(t)).join('');

const rows = (raw: string, options = framed) =>
  decodeLineCapture(Buffer.from(raw, 'latin1'), profile, options).map((m) => ({
    results: m.results.map((r) => [r.accession, r.source.analyzerCode, r.valueText, r.value]),
    rejections: m.rejections.map((r) => r.reason),
  }));

describe('STX text ETX BCC records', () => {
  test('each record is a line; the block check is verified', () => {
    expect(rows(report('A1') + report('A2'))).toEqual([
      {
        results: [
          ['A1', 'Na', '141', 141],
          ['A1', 'K', '4.2', 4.2],
          ['A1', 'Cl', '103', 103],
        ],
        rejections: [],
      },
      {
        results: [
          ['A2', 'Na', '141', 141],
          ['A2', 'K', '4.2', 4.2],
          ['A2', 'Cl', '103', 103],
        ],
        rejections: [],
      },
    ]);
  });

  test('a check character that is itself STX or ETX is taken as the check, not as framing', () => {
    for (const bcc of [0x02, 0x03]) {
      const k = withCheck('K   4.2 mmol/L ', bcc);
      const raw = report('A1', k);
      expect(Buffer.from(raw, 'latin1').includes(Buffer.from([0x03, bcc]))).toBe(true);
      expect(rows(raw)[0]!.results).toEqual([
        ['A1', 'Na', '141', 141],
        ['A1', 'K', '4.2', 4.2],
        ['A1', 'Cl', '103', 103],
      ]);
    }
  });

  test('a record whose check fails is journaled with its report, and nothing of that report is loaded', () => {
    const good = report('A1');
    const bad = good.replace('K   4.2', 'K   9.2');
    const [decoded] = decodeLineCapture(Buffer.from(bad, 'latin1'), profile, framed);
    expect(decoded!.results).toEqual([]);
    expect(decoded!.rejections).toHaveLength(3);
    expect(decoded!.rejections[0]!.reason).toMatch(/report arrived damaged \(line 3: block check character 0x[0-9A-F]{2} is not 0x[0-9A-F]{2}\)/);
  });

  test('sum checks and checks that cover STX are options', () => {
    const sum = lineOptions({ ...framed, bcc: 'sum', bccIncludesStx: true });
    const raw = [`SAMPLE A1 2024-11-05 09:41`, 'Na  141 mmol/L', 'END'].map((t) => record(t, 'sum', true)).join('');
    expect(rows(raw, sum)[0]!.results).toEqual([['A1', 'Na', '141', 141]]);
    expect(rows(raw)[0]!.rejections[0]).toMatch(/block check character/);
  });

  test('the runner commits byte-for-byte what it received and agrees with decode at every chunking', () => {
    const raw = Buffer.from(`noise${report('A1', withCheck('K   4.2 mmol/L ', 0x03))}${report('A2')}`, 'latin1');
    const want = decodeLineCapture(raw, profile, framed);
    expect(want).toHaveLength(2);
    for (let i = 0; i <= raw.length; i += 1) {
      const h = makeContext(profile);
      createLineRunner(h.ctx, framed).start();
      h.transport.emitData(raw.subarray(0, i));
      h.transport.emitData(raw.subarray(i));
      h.clock.advance(60_000);
      expect(h.ingest.messages.map((m) => ({ results: m.results, rejections: m.rejections }))).toEqual(want);
      // Bytes before a record (the noise, CR LF) travel with it; the CR LF after the last one is outside any record.
      expect(Buffer.concat(h.ingest.messages.map((m) => m.capture.raw))).toEqual(raw.subarray(0, raw.length - 2));
    }
  });

  test('a record longer than maxLineBytes is dropped whole, and reading resumes at the next record', () => {
    const long = record(`SAMPLE A9 2024-11-05 09:41 ${'x'.repeat(100)}`);
    const events = split(Buffer.from(long + record('END'), 'latin1'), { kind: 'stx-etx-bcc', maxLineBytes: 80, bcc: 'xor', bccIncludesStx: false });
    expect(events.map((e) => e.kind)).toEqual(['too-long', 'line', 'stray']);
  });
});

describe('line framing', () => {
  const lines = (max = 80, delimiter = '\r\n'): FramingConfig => ({ kind: 'lines', delimiter: Buffer.from(delimiter), maxLineBytes: max });

  test('a delimiter split across chunks still ends its line', () => {
    const raw = Buffer.from('AB\r\nCD\r\n');
    for (let i = 0; i <= raw.length; i += 1) {
      let state = initialFramingState();
      const all: FramingEvent[] = [];
      for (const chunk of [raw.subarray(0, i), raw.subarray(i)]) {
        const step = frameStep(state, chunk, lines());
        state = step.state;
        all.push(...step.events);
      }
      expect(all.map((e) => (e.kind === 'line' ? e.line.text.toString() : e.kind))).toEqual(['AB', 'CD']);
    }
  });

  test('a line of exactly maxLineBytes is kept; one byte more is dropped whole and reported once', () => {
    expect(
      split(Buffer.from(`${'a'.repeat(80)}\r\n${'b'.repeat(81)}\r\nc\r\n`), lines()).map((e) => (e.kind === 'line' ? e.line.text.length : e.kind)),
    ).toEqual([80, 'too-long', 1]);
  });

  test('byte by byte, memory stays bounded by the limit however long the line', () => {
    let state = initialFramingState();
    for (let i = 0; i < 10_000; i += 1) state = frameStep(state, Buffer.from('x'), lines()).state;
    expect(state.size).toBe(0);
    expect(state.skipped).toBe(10_000);
  });
});

describe('fixed-column result rows', () => {
  const columns = lineOptions({
    start: '^SAMPLE (?<accession>\\S+) (?<year>\\d{4})-(?<month>\\d\\d)-(?<day>\\d\\d) (?<hour>\\d\\d):(?<minute>\\d\\d)',
    columns: { rows: '^[A-Z][a-z]? ', code: [1, 10], flags: [12, 13], value: [14, 20], unit: [21, 28] },
    end: '^END',
  });
  // Columns 1-10 code, 12-13 marks, 14-20 value (right-aligned), 21-28 unit.
  const row = (code: string, marks: string, value: string, unit: string) => `${code.padEnd(10)} ${marks.padEnd(2)}${value.padStart(7)}${unit.padEnd(8)}`;
  const printout =
    ['SAMPLE A1 2024-11-05 09:41', row('Na', 'h', '151', 'mmol/L'), row('K', '', '4.2', 'mmol/L'), row('Cl', '<', '<  70', 'mmol/L'), 'END'].join('\n') + '\n';

  test('code, value, unit and marks are read by position', () => {
    const [decoded] = decodeLineCapture(Buffer.from(printout), profile, columns);
    expect(decoded!.rejections).toEqual([]);
    expect(decoded!.results.map((r) => [r.source.analyzerCode, r.valueText, r.value, r.comparator, r.bound, r.unit, r.flags])).toEqual([
      ['Na', '151', 151, null, null, 'mmol/L', ['h']],
      ['K', '4.2', 4.2, null, null, 'mmol/L', []],
      ['Cl', '<  70', null, '<', 70, 'mmol/L', ['<']],
    ]);
  });

  test('a row of fixed columns, each one analyte, gives one result per column (HbA1c fractions)', () => {
    // One row of eleven values in six-character columns: the analyte is the column, not text on the row.
    const names = ['A1a', 'A1b', 'F', 'LA1c', 'A1c', 'P3', 'P4', 'A0', 'S', 'C', 'TOTAL'];
    const hba1c = lineOptions({
      start: '^SAMPLE (?<accession>\\S+) (?<year>\\d{4})-(?<month>\\d\\d)-(?<day>\\d\\d) (?<hour>\\d\\d):(?<minute>\\d\\d)',
      columns: { rows: '^ *[0-9.]', analytes: names.map((code, i) => ({ code, value: [i * 6 + 1, i * 6 + 6] as [number, number] })) },
      end: '^END',
    });
    const values = ['0.8', '0.9', '0.4', '1.9', '5.6', '3.1', '', '86.9', '0.1', '0.2', '100.0'];
    const text = ['SAMPLE H-77 2024-11-05 09:41', values.map((v) => v.padStart(6)).join(''), 'END'].join('\n') + '\n';
    const p: InstrumentProfile = { ...profile, mapping: names.map((code, i) => ({ code, loinc: `9${String(i).padStart(3, '0')}-${i % 10}` })) };
    const [decoded] = decodeLineCapture(Buffer.from(text), p, hba1c);
    expect(decoded!.rejections).toEqual([]);
    // P4's column is blank: the analyzer printed no value there, so there is no result for it.
    expect(decoded!.results.map((r) => [r.source.analyzerCode, r.accession, r.value])).toEqual(
      names.map((code, i) => [code, 'H-77', Number(values[i])]).filter((_, i) => values[i] !== ''),
    );
  });

  test('a row is read by code and value columns or by analytes, not both', () => {
    const base = { start: '^S', end: '^E' };
    const mixed = lineOptionsSchema.safeParse({ ...base, columns: { rows: '.', code: [1, 2], value: [3, 4], analytes: [{ code: 'A', value: [1, 2] }] } });
    expect(mixed.error?.issues[0]?.message).toMatch(/by `code` and `value` columns, or by `analytes`/);
    expect(lineOptionsSchema.safeParse({ ...base, columns: { rows: '.', code: [1, 2] } }).success).toBe(false);
    expect(lineOptionsSchema.safeParse({ ...base, columns: { rows: '.', analytes: [{ code: 'A', value: [1, 2] }] } }).success).toBe(true);
  });

  test('a layout gives `result` or `columns`, never both, and columns run forwards', () => {
    const base = { start: '^S', end: '^E' };
    expect(lineOptionsSchema.safeParse(base).error?.issues[0]?.message).toMatch(/exactly one/);
    expect(lineOptionsSchema.safeParse({ ...base, result: '(?<code>\\w+)=(?<value>\\S+)', columns: { rows: '.', code: [1, 2], value: [3, 4] } }).success).toBe(
      false,
    );
    expect(lineOptionsSchema.safeParse({ ...base, columns: { rows: '.', code: [5, 2], value: [3, 4] } }).error?.issues[0]?.message).toMatch(
      /must not be after/,
    );
  });
});

describe('property: any chunking of framed records gives the same lines', () => {
  test('records', () => {
    const config: FramingConfig = { kind: 'stx-etx-bcc', maxLineBytes: 200, bcc: 'xor', bccIncludesStx: false };
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ maxLength: 30 }).map((t) => t.replaceAll(STX, '').replaceAll(ETX, '')),
          { maxLength: 6 },
        ),
        fc.array(fc.nat(), { maxLength: 5 }),
        (texts, cuts) => {
          const raw = Buffer.from(texts.map((t) => record(t)).join(''), 'latin1');
          const whole = split(raw, config);
          const points = [...new Set(cuts.map((c) => c % (raw.length + 1)))].sort((a, b) => a - b);
          let state = initialFramingState();
          const events: FramingEvent[] = [];
          let from = 0;
          for (const at of [...points, raw.length]) {
            const step = frameStep(state, raw.subarray(from, at), config);
            state = step.state;
            events.push(...step.events);
            from = at;
          }
          events.push(...frameEnd(state, config));
          expect(events).toEqual(whole);
          expect(whole.filter((e) => e.kind === 'line').map((e) => (e.kind === 'line' ? [e.line.text.toString('latin1'), e.line.problem] : null))).toEqual(
            texts.map((t) => [Buffer.from(t, 'latin1').toString('latin1'), undefined]),
          );
        },
      ),
    );
  });
});

function split(raw: Buffer, config: FramingConfig): FramingEvent[] {
  const step = frameStep(initialFramingState(), raw, config);
  return [...step.events, ...frameEnd(step.state, config)];
}
