// Outbox rows as the store would hand them to the LIMS sink: for the tests, the LIMS bench and the demo.
import { buildPayload, sha256Hex } from '../payload.js';
import { keyedResultSchema, type KeyedResultInput } from '../result.js';
import type { OutboxRow } from '../delivery/contract.js';

/** A plausible potassium result number `i`; `overrides` change clinical fields. */
export function sampleResult(i: number, overrides: Partial<KeyedResultInput> = {}): KeyedResultInput {
  return {
    accession: `A${100000 + i}`,
    analyteLoinc: '2823-3',
    instrumentId: 'chem-1',
    resultedAt: new Date(Date.UTC(2026, 6, 1, 8, 0, 0) + i * 1000).toISOString().slice(0, 19) + '+00:00',
    valueText: (3.5 + (i % 20) / 10).toFixed(1),
    value: 3.5 + (i % 20) / 10,
    comparator: null,
    bound: null,
    unit: 'mmol/L',
    status: 'final',
    statusCode: 'F',
    flags: [],
    referenceRange: '3.5-5.1',
    qc: false,
    source: { gatewayId: 'gw-test', driver: 'astm', analyzerCode: 'K', captureId: i + 1 },
    ...overrides,
  };
}

/** An outbox row for the LIMS sink carrying `result`; `etag` set for a correction. */
export function sampleRow(id: number, result: KeyedResultInput, etag: string | null = null): OutboxRow {
  const payload = buildPayload(keyedResultSchema.parse(result), { receivedAt: Date.UTC(2026, 6, 1, 8, 0, 0), rawSha256: sha256Hex(`capture ${id}`) });
  const text = JSON.stringify(payload);
  return { id, sink: 'lims', dedupKey: payload.dedupKey, recordId: payload.recordId, attempts: 0, etag, payload: text, payloadSha256: sha256Hex(text) };
}

/** `n` rows of distinct results. */
export function sampleRows(n: number, first = 0): OutboxRow[] {
  return Array.from({ length: n }, (_, k) => sampleRow(first + k + 1, sampleResult(first + k)));
}
