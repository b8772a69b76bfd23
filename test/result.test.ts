import { describe, expect, it } from 'vitest';
import { canonicalInstant, dedupKey, keyedResultSchema, recordId, uuidV5 } from '../src/result.js';
import { potassium } from './fixtures/results.js';

const VECTOR = 'f737981efdd975cec05399faf6459a46f7763c508ac27bf6735dbdc1cb9c978f';

describe('dedup key', () => {
  it('matches the central system for the reference vector', () => {
    expect(dedupKey({ accession: 'A100', analyteLoinc: '2823-3', instrumentId: 'chem-1', resultedAt: new Date('2026-07-01T14:30:00Z') })).toBe(VECTOR);
  });

  it('matches for padded fields, sub-second time and a +02:00 offset', () => {
    expect(dedupKey({ accession: ' A100 ', analyteLoinc: '2823-3 ', instrumentId: 'chem-1', resultedAt: '2026-07-01T16:30:00.750+02:00' })).toBe(VECTOR);
  });

  it('collapses whitespace, LOINC case, sub-second jitter and offsets onto one key', () => {
    const variants = [
      { accession: 'A100', analyteLoinc: '2823-3', instrumentId: 'chem-1', resultedAt: '2026-07-01T14:30:00.999Z' },
      { accession: '\tA100', analyteLoinc: ' 2823-3', instrumentId: ' chem-1 ', resultedAt: '2026-07-01T09:30:00.001-05:00' },
      { accession: 'A100', analyteLoinc: '2823-3', instrumentId: 'chem-1', resultedAt: Date.UTC(2026, 6, 1, 14, 30, 0, 500) },
      { accession: 'A100', analyteLoinc: '2823-3', instrumentId: 'chem-1', resultedAt: '2026-07-01T14:30:00+00:00' },
    ];
    for (const v of variants) expect(dedupKey(v)).toBe(VECTOR);
    const lower = dedupKey({ accession: 'X1', analyteLoinc: 'lp1234-5', instrumentId: 'i', resultedAt: 0 });
    expect(dedupKey({ accession: 'X1', analyteLoinc: 'LP1234-5', instrumentId: 'i', resultedAt: 0 })).toBe(lower);
  });

  it('truncates, never rounds, to whole seconds', () => {
    expect(canonicalInstant(new Date('2026-07-01T14:30:00.999Z'))).toBe('2026-07-01T14:30:00+00:00');
  });

  it('gives a genuine re-test (different resulted_at) a new key', () => {
    const base = { accession: 'A100', analyteLoinc: '2823-3', instrumentId: 'chem-1' };
    expect(dedupKey({ ...base, resultedAt: '2026-07-01T14:30:01Z' })).not.toBe(VECTOR);
  });

  it('refuses empty parts', () => {
    expect(() => dedupKey({ accession: '  ', analyteLoinc: '2823-3', instrumentId: 'chem-1', resultedAt: 0 })).toThrow(RangeError);
  });
});

describe('record id', () => {
  it('is the RFC 9562 UUIDv5 (checked against the DNS-namespace example)', () => {
    // RFC 9562 appendix A.4: UUIDv5 of "www.example.com" in the DNS namespace.
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('is stable for a key and differs between keys', () => {
    expect(recordId(VECTOR)).toBe(recordId(VECTOR));
    expect(recordId(VECTOR)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(recordId(VECTOR)).not.toBe(recordId(VECTOR.replace('f', 'e')));
  });
});

describe('keyed result schema', () => {
  const valid = potassium(' A100 ');

  it('trims the accession and upper-cases the LOINC', () => {
    const r = keyedResultSchema.parse({ ...valid, analyteLoinc: 'lp1234-5' });
    expect(r.accession).toBe('A100');
    expect(r.analyteLoinc).toBe('LP1234-5');
  });

  it('rejects a time not in the canonical key form', () => {
    expect(keyedResultSchema.safeParse({ ...valid, resultedAt: '2026-07-01T14:30:00Z' }).success).toBe(false);
  });
});
