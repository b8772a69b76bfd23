import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { sampleResult, sampleRow } from '../../src/lims-server/sample-rows.js';
import { buildEnvelope, ENVELOPE_VERSION, idempotencyKey, limsClinicalContent, sfString } from '../../src/sinks/lims-envelope.js';
import type { ResultPayload } from '../../src/payload.js';

const envelopeOf = (i: number, over = {}) => buildEnvelope(JSON.parse(sampleRow(i, sampleResult(i, over)).payload) as ResultPayload, 'gw-a');

describe('LIMS envelope', () => {
  it('carries the record id, dedup key and provenance', () => {
    const e = envelopeOf(1);
    expect(e.envelopeVersion).toBe('1');
    expect(e.recordId).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.dedupKey).toMatch(/^[0-9a-f]{64}$/);
    expect(e.provenance).toMatchObject({ gatewayId: 'gw-a', instrument: 'chem-1', analyzerCode: 'K' });
    expect(e.provenance.captureSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives the same key for the same body and a new key for a changed one', () => {
    const a = JSON.stringify(envelopeOf(1));
    const b = JSON.stringify(envelopeOf(1, { valueText: '9.9', value: 9.9 }));
    const id = envelopeOf(1).recordId;
    expect(idempotencyKey(id, a)).toBe(idempotencyKey(id, JSON.stringify(envelopeOf(1))));
    expect(idempotencyKey(id, b)).not.toBe(idempotencyKey(id, a));
  });

  it('quotes structured-field strings', () => {
    expect(sfString('abc')).toBe('"abc"');
    expect(sfString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(() => sfString('é')).toThrow(RangeError);
  });

  it('compares clinical content regardless of flag order and provenance', () => {
    const a = envelopeOf(1, { flags: ['H', 'A'] });
    const b = { ...envelopeOf(1, { flags: ['A', 'H'] }), provenance: { gatewayId: 'other' } };
    expect(limsClinicalContent(a)).toBe(limsClinicalContent(b));
    expect(limsClinicalContent(envelopeOf(1, { valueText: '9.9', value: 9.9 }))).not.toBe(limsClinicalContent(a));
    expect(limsClinicalContent({})).toBeNull();
  });

  it('carries the status letter and a censored value as comparator and bound, never as a number', () => {
    const e = envelopeOf(1, { valueText: '<0.5', value: null, comparator: '<', bound: 0.5, status: 'preliminary', statusCode: 'W' });
    expect(e.result).toMatchObject({ valueText: '<0.5', value: null, comparator: '<', bound: 0.5, status: 'preliminary', statusCode: 'W' });
  });

  it('reads a payload stored before bound and statusCode existed with both null', () => {
    const payload = JSON.parse(sampleRow(1, sampleResult(1)).payload) as ResultPayload;
    const { bound: _b, statusCode: _s, ...older } = payload.result;
    const e = buildEnvelope({ ...payload, result: older as ResultPayload['result'] }, 'gw-a');
    expect(e.result).toMatchObject({ bound: null, statusCode: null });
  });

  it("takes a document written with `<0.5` as value 0.5 for the same content as today's censored result", () => {
    const today = envelopeOf(1, { valueText: '<0.5', value: null, comparator: '<', bound: 0.5 });
    const before = { ...today, result: { ...today.result, value: 0.5, bound: undefined } };
    expect(limsClinicalContent(before)).toBe(limsClinicalContent(today));
  });

  it('is exactly the documented version 1: every field of src/sinks/LIMS.md, no other', () => {
    const doc = readFileSync(new URL('../../src/sinks/LIMS.md', import.meta.url), 'utf8');
    const version1 = doc.slice(doc.indexOf('## Version 1'), doc.indexOf('## Headers'));
    const documented = [...version1.matchAll(/^\| `([\w.]+)` \|/gm)].map((m) => m[1]);
    const always = leafPaths(envelopeOf(1));
    // provenance.capturedAtUnreliable is there only when the gateway's clock was not synchronised at receipt.
    const payload = JSON.parse(sampleRow(1, sampleResult(1)).payload) as ResultPayload;
    const unsynchronised = leafPaths(buildEnvelope({ ...payload, capture: { ...payload.capture, clock: 'unsynchronised' } }, 'gw-a'));
    expect(unsynchronised.filter((p) => !always.includes(p))).toEqual(['provenance.capturedAtUnreliable']);
    expect(unsynchronised.sort()).toEqual(documented.sort());
    expect(ENVELOPE_VERSION).toBe('1');
  });

  it('is not configurable: a configuration naming a version is refused, not silently ignored', () => {
    const lims = { baseUrl: 'https://lims.example', auth: { kind: 'static', tokenFile: '/etc/labgate/lims-token' } };
    expect(validateConfig({ gateway: { id: 'gw' }, sinks: { lims } }).kind).toBe('ok');
    const refused = validateConfig({ gateway: { id: 'gw' }, sinks: { lims: { ...lims, envelopeVersion: '2' } } });
    expect(refused.kind).toBe('invalid');
    expect(JSON.stringify(refused)).toMatch(/envelopeVersion/);
  });
});

/** `a.b` paths of an object's leaves (arrays are leaves). */
function leafPaths(value: object, prefix = ''): string[] {
  return Object.entries(value).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? leafPaths(v as object, `${prefix}${k}.`) : [`${prefix}${k}`],
  );
}
