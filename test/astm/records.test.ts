// LIS2-A2 records: delimiters from the header, escapes, nesting, records spanning frames.
import { describe, expect, it } from 'vitest';
import { endsWithTerminator } from '../../drivers/astm/record-end.js';
import { component, fieldText, parseRecords, readDelimiters, repeats, splitRecords, unescape } from '../../drivers/astm/records.js';

const d = { field: '|', repeat: '\\', component: '^', escape: '&' };

describe('ASTM records (LIS2-A2)', () => {
  it('reads delimiters from the H record, never hard-coded', () => {
    expect(readDelimiters('H|\\^&|||x')).toEqual(d);
    expect(readDelimiters('H!~#$!!!x')).toEqual({ field: '!', repeat: '~', component: '#', escape: '$' });
    expect(readDelimiters('H|||')).toBeUndefined();
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
    ['&F&', '|'], ['&S&', '^'], ['&R&', '\\'], ['&E&', '&'], ['&X41&', 'A'], ['&X4142&', 'AB'], ['a&Z&b', 'a&Z&b'], ['PNG&R&2024&R&x.PNG', 'PNG\\2024\\x.PNG'],
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
    const text = ['H|\\^&', 'P|1', 'O|1|A1', 'R|1|^^^GLU|5', 'C|1|I|hemolysed|G', 'R|2|^^^NA|140', 'O|2|A2', 'R|1|^^^K|4.1', 'P|2', 'O|1|B1', 'R|1|^^^GLU|6', 'L|1|N'].join('\r') + '\r';
    const [m] = parseRecords(text);
    expect(m!.terminated).toBe(true);
    expect(m!.results.map((e) => `${component(e.order!, 3, 1)}:${component(e.result, 3, 4)}:${fieldText(e.patient!, 2)}`)).toEqual(['A1:GLU:1', 'A1:NA:1', 'A2:K:1', 'B1:GLU:2']);
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
  });
});
