// The sink contract (src/delivery/contract.ts): what every sink must do, run against each one by its own test file.
// One outcome per row in order; never a throw; a replay delivered; different content under the same key a
// conflict that leaves the destination as it was; an outage a sink-wide retry; an abort a retry that sent
// nothing. A new sink passes this suite with a harness of its own (a destination it can read, break and refuse).
import { describe, expect, it } from 'vitest';
import { buildPayload, sha256Hex } from '../../src/payload.js';
import { keyedResultSchema, type KeyedResultInput } from '../../src/result.js';
import { sampleResult } from '../../src/lims-server/sample-rows.js';
import type { OutboxRow, Outcome, Sink } from '../../src/delivery/contract.js';

/** What the destination holds for a result's key: how many records, and the value of the one it holds. */
export interface Held {
  count: number;
  value: number | null;
}

/** A sink under test and the hands on its destination. */
export interface SinkHarness {
  sink: Sink;
  /** The outbox name of the sink (the rows' `sink`). */
  name: string;
  /** From now on the destination refuses `row`'s result as it is (a record-specific, permanent failure). */
  refuse(row: OutboxRow): Promise<void>;
  /** What the destination holds for `row`'s key. */
  held(row: OutboxRow): Promise<Held>;
  /** Makes the destination unreachable (`true`) or reachable again. */
  outage(down: boolean): Promise<void>;
  close(): Promise<void>;
}

/** Builds the sink's rows: result `i` (distinct keys by `i`) with `overrides`, as the store hands it out. */
export function contractRow(name: string, id: number, i: number, overrides: Partial<KeyedResultInput> = {}): OutboxRow {
  const payload = buildPayload(keyedResultSchema.parse(sampleResult(i, { accession: `C${900000 + i}`, ...overrides })), {
    receivedAt: Date.UTC(2026, 6, 1, 8, 0, 0),
    rawSha256: sha256Hex(`capture ${id}`),
  });
  const text = JSON.stringify(payload);
  return { id, sink: name, dedupKey: payload.dedupKey, recordId: payload.recordId, attempts: 0, etag: null, payload: text, payloadSha256: sha256Hex(text) };
}

const live = (): AbortSignal => new AbortController().signal;
const kinds = (outs: readonly Outcome[]): string[] => outs.map((o) => o.kind);

/** Registers the contract's tests for the sink `make()` builds (one fresh harness per test). */
export function sinkContract(title: string, make: () => Promise<SinkHarness>): void {
  const within = async (test: (h: SinkHarness, row: (id: number, i: number, o?: Partial<KeyedResultInput>) => OutboxRow) => Promise<void>): Promise<void> => {
    const h = await make();
    try {
      await test(h, (id, i, o) => contractRow(h.name, id, i, o));
    } finally {
      await h.close();
    }
  };

  describe(`sink contract: ${title}`, () => {
    it("one outcome per row, in the rows' order, a refused row among delivered ones", () =>
      within(async (h, row) => {
        const rows = [1, 2, 3, 4, 5].map((i) => row(i, i));
        await h.refuse(rows[1]!);
        await h.refuse(rows[3]!);
        const outs = await h.sink.deliver(rows, live());
        expect(kinds(outs)).toEqual(['delivered', 'dead', 'delivered', 'dead', 'delivered']);
        expect((await Promise.all(rows.map((r) => h.held(r)))).map((x) => x.count)).toEqual([1, 0, 1, 0, 1]);
        expect(await h.sink.deliver([], live())).toEqual([]);
      }));

    it('never throws: payloads that are no result, an empty batch, a destination that is down', () =>
      within(async (h, row) => {
        const good = row(1, 1);
        const junk = (text: string, id: number): OutboxRow => ({ ...row(id, id), payload: text, payloadSha256: sha256Hex(text) });
        const batch = [junk('not json', 10), junk('{"x":1}', 11), junk('null', 12), good];
        const outs = await h.sink.deliver(batch, live());
        expect(outs).toHaveLength(batch.length);
        expect(outs[3]!.kind).toBe('delivered');
        expect(
          outs.slice(0, 3).map((o) => o.kind === 'dead' || o.kind === 'retry'),
          JSON.stringify(outs),
        ).toEqual([true, true, true]);
        await h.outage(true);
        await expect(h.sink.deliver([row(2, 2)], live())).resolves.toHaveLength(1);
      }));

    it('a replay (the same row again, its first answer lost) is delivered and held once', () =>
      within(async (h, row) => {
        const r = row(1, 1);
        expect(kinds(await h.sink.deliver([r], live()))).toEqual(['delivered']);
        expect(kinds(await h.sink.deliver([{ ...r, attempts: 1 }], live()))).toEqual(['delivered']);
        expect(await h.held(r)).toEqual({ count: 1, value: sampleValue(1) });
      }));

    it('different clinical content under the same key is a conflict; the destination keeps what it had', () =>
      within(async (h, row) => {
        const first = row(1, 1);
        await h.sink.deliver([first], live());
        const other = row(2, 1, { valueText: '9.7', value: 9.7 });
        expect(other.dedupKey).toBe(first.dedupKey);
        expect(kinds(await h.sink.deliver([other], live()))).toEqual(['conflict']);
        expect(await h.held(first)).toEqual({ count: 1, value: sampleValue(1) });
      }));

    it('an outage is a retry that tells the breaker the sink is down, and nothing is lost when it ends', () =>
      within(async (h, row) => {
        const rows = [row(1, 1), row(2, 2)];
        await h.outage(true);
        const outs = await h.sink.deliver(rows, live());
        expect(
          outs.every((o) => o.kind === 'retry'),
          JSON.stringify(outs),
        ).toBe(true);
        // Sink-wide evidence (delivery/contract.ts): at least once per failed exchange, never only the records' own waits.
        expect(
          outs.some((o) => o.kind === 'retry' && (o.scope === 'sink' || o.scope === 'unreachable')),
          JSON.stringify(outs),
        ).toBe(true);
        await h.outage(false);
        expect(kinds(await h.sink.deliver(rows, live()))).toEqual(['delivered', 'delivered']);
      }));

    it('an aborted delivery is a retry and sends nothing', () =>
      within(async (h, row) => {
        const ac = new AbortController();
        ac.abort();
        const rows = [row(1, 1), row(2, 2)];
        const outs = await h.sink.deliver(rows, ac.signal);
        expect(outs.every((o) => o.kind === 'retry')).toBe(true);
        expect((await Promise.all(rows.map((r) => h.held(r)))).map((x) => x.count)).toEqual([0, 0]);
      }));
  });
}

/** The value of sample result `i`. */
export function sampleValue(i: number): number {
  return sampleResult(i).value as number;
}
