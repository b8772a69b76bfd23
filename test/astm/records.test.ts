// LIS2-A2 records: delimiters from the header, escapes, nesting, records spanning frames.
import { describe, expect, it } from 'vitest';
import { endsWithTerminator } from '../../drivers/astm/record-end.js';
import { component, fieldText, parseRecords, readDelimiters, repeats, splitRecords, unescape } from '../../drivers/astm/records.js';

const d = { field: '|', repeat: '\\', component: '^', escape: '&' };

describe('ASTM records (LIS2-A2)', () => {
  it('reads delimiters from the H record, never hard-coded', () => {
    expect(readDelimiters('H|\\^&|||x')).toEqual({ kind: 'delimiters', delimiters: d });
    expect(readDelimiters('H!~#$!!!x')).toEqual({ kind: 'delimiters', delimiters: { field: '!', repeat: '~', component: '#', escape: '$' } });
    expect(readDelimiters('H|\\^&')).toEqual({ kind: 'delimiters', delimiters: d });
  });

  it('reads H.2 by the rule: a doubled character once, a missing escape as none, anything else refused with the reason', () => {
    expect(readDelimiters('H|\\\\^&|||x')).toEqual({ kind: 'delimiters', delimiters: d });
    expect(readDelimiters('H|\\^&&|||x')).toEqual({ kind: 'delimiters', delimiters: d });
    expect(readDelimiters('H|\\^|||x')).toEqual({ kind: 'delimiters', delimiters: { ...d, escape: null } });
    expect(readDelimiters('H|||')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/must declare the repeat and component/) });
    expect(readDelimiters('H|\\^&~|')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/declares 4 delimiters/) });
    expect(readDelimiters('H|\\^\\|')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/one character for two delimiters/) });
    expect(readDelimiters('H|\\^a|')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/'a', which cannot be a delimiter/) });
    expect(readDelimiters('Hx\\^&x')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/no field delimiter/) });
    // A character outside the Basic Multilingual Plane (UTF-8 mode) is two UTF-16 halves: never a delimiter.
    expect(readDelimiters('H|\u{1F600}^&|')).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/U\+D83D, which cannot be a delimiter/) });
  });

  it('a header whose delimiter definition cannot be read makes its message unread, never shifted', () => {
    const [bad, good] = parseRecords('H|\\^&~||||||||||Q\rO|1|A\rR|1|^^^X|1\rL|1\rH|\\^&\rO|1|B\rR|1|^^^X|2\rL|1\r');
    expect(bad).toMatchObject({ header: null, results: [], invalid: expect.stringMatching(/H.2 delimiter definition/) });
    expect(good!.results).toHaveLength(1);
  });

  it('a doubled escape keeps every header field where the record says: H.12 = Q is read', () => {
    const [m] = parseRecords('H|\\\\^&|||XN^1|||||||Q|1|20260701120000\rO|1|A\rR|1|^^^X|1\rL|1\r');
    expect(component(m!.header!, 12, 1)).toBe('Q');
    expect(component(m!.header!, 14, 1)).toBe('20260701120000');
  });

  it('a record type is one upper-case letter followed by the field delimiter', () => {
    const [m] = parseRecords('H|\\^&\rO|1|A\rR|1|^^^X|1\rhost|1|B\rresult comment text\rr|2|^^^Y|2\rRX|3|^^^Z|3\rL|1\r');
    expect(m!.results.map((e) => component(e.result, 3, 4))).toEqual(['X']);
    expect(m!.strayLines).toBe(4);
    expect(parseRecords('host|\\^&\rR|1|^^^X|1\rL|1\r')[0]!.header).toBeNull();
  });

  it('parses a message with other delimiters from its header', () => {
    const [m] = parseRecords('H!~#$!!!Emu\rP!1\rO!1!S1\rR!1!###GLU!5.5!mmol/L\rL!1!N\r');
    expect(m?.results).toHaveLength(1);
    const r = m!.results[0]!.result;
    expect(component(r, 3, 4)).toBe('GLU');
    expect(fieldText(r, 4)).toBe('5.5');
    expect(component(m!.results[0]!.order!, 3, 1)).toBe('S1');
  });

  it.each([
    ['&F&', '|'],
    ['&S&', '^'],
    ['&R&', '\\'],
    ['&E&', '&'],
    ['&X41&', 'A'],
    ['&X4142&', 'AB'],
    ['a&Z&b', 'a&Z&b'],
    ['PNG&R&2024&R&x.PNG', 'PNG\\2024\\x.PNG'],
  ])('unescapes %s', (raw, out) => {
    expect(unescape(raw, d)).toBe(out);
  });

  it('unescapes after splitting, so an escaped delimiter stays data', () => {
    const [m] = parseRecords('H|\\^&\rO|1|A&S&1^B\rR|1|^^^X|v&F&w|u\rL|1\r');
    const e = m!.results[0]!;
    expect(component(e.order!, 3, 1)).toBe('A^1');
    expect(fieldText(e.result, 4)).toBe('v|w');
  });

  it('nests several patients, orders and results; comments follow what they comment', () => {
    const text =
      [
        'H|\\^&',
        'P|1',
        'O|1|A1',
        'R|1|^^^GLU|5',
        'C|1|I|hemolysed|G',
        'R|2|^^^NA|140',
        'O|2|A2',
        'R|1|^^^K|4.1',
        'P|2',
        'O|1|B1',
        'R|1|^^^GLU|6',
        'L|1|N',
      ].join('\r') + '\r';
    const [m] = parseRecords(text);
    expect(m!.terminated).toBe(true);
    expect(m!.results.map((e) => `${component(e.order!, 3, 1)}:${component(e.result, 3, 4)}:${fieldText(e.patient!, 2)}`)).toEqual([
      'A1:GLU:1',
      'A1:NA:1',
      'A2:K:1',
      'B1:GLU:2',
    ]);
    expect(m!.results[0]!.comments).toHaveLength(1);
    expect(m!.results[1]!.comments).toHaveLength(0);
  });

  it('splits repeats', () => {
    const [m] = parseRecords('H|\\^&\rO|1|A\rR|1|^^^X|1|||H\\LL\rL\r');
    expect(repeats(m!.results[0]!.result, 7)).toEqual(['H', 'LL']);
  });

  it('several H..L messages in one text', () => {
    const ms = parseRecords('H|\\^&\rO|1|A\rR|1|^^^X|1\rL|1\rH|\\^&\rO|1|B\rR|1|^^^X|2\rL|1\r');
    expect(ms).toHaveLength(2);
  });

  it('records before any header are not results', () => {
    const [m] = parseRecords('R|1|^^^X|1\rL|1\r');
    expect(m!.header).toBeNull();
    expect(m!.results).toHaveLength(0);
  });

  it('splits on CR, CR LF and LF (bare records)', () => {
    expect(splitRecords('H|\\^&\r\nP|1\nL|1\r')).toEqual(['H|\\^&', 'P|1', 'L|1']);
  });

  it('finds the L terminator at the end of reassembled text', () => {
    expect(endsWithTerminator(Buffer.from('H|\\^&\rL|1|N\r'))).toBe(true);
    expect(endsWithTerminator(Buffer.from('H|\\^&\rR|1|^^^L|1\r'))).toBe(false);
    expect(endsWithTerminator(Buffer.from('H|\\^&\rLDL|1\r'))).toBe(false);
    expect(endsWithTerminator(Buffer.from('H!\\^&\rL!1\r'))).toBe(true);
    expect(endsWithTerminator(Buffer.from('H|\\^&\rl|1\r'))).toBe(false);
  });
});
