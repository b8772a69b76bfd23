// The day at a glance, arranged and drawn: 24 hourly buckets ending with the current hour, the backlog as a step line
// from its level at the window's start to the pending count now, and SVG that escapes what it shows.
import { describe, expect, it } from 'vitest';
import { dayView, windowStart } from '../../src/web/status/day-view.js';
import { daySection, niceMax } from '../../src/web/status/render-charts.js';

const HOUR = 3_600_000;
const now = Date.UTC(2026, 10, 30, 12, 20);
const first = windowStart(now);
const label = (ms: number): string => String(new Date(ms).getUTCHours()).padStart(2, '0');

describe('dayView', () => {
  it('puts each hour in its bucket, the current hour last, and leaves hours outside the window out', () => {
    const view = dayView({
      now,
      instruments: ['chem1', 'idle1'],
      hourLabel: label,
      hours: [
        { instrumentId: 'chem1', hour: first - 1, messages: 1, results: 99, rejected: 0 },
        { instrumentId: 'chem1', hour: first, messages: 2, results: 10, rejected: 1 },
        { instrumentId: 'chem1', hour: first + 23, messages: 1, results: 4, rejected: 0 },
      ],
      sinks: [],
      delivered: [],
      backlog: [],
    });
    expect(view.labels[0]).toBe('13');
    expect(view.labels[23]).toBe('12');
    expect(view.from).toBe(first * HOUR);
    expect(view.instruments[0]!.results).toEqual([10, ...new Array(22).fill(0), 4]);
    expect(view.instruments[0]!.rejected[0]).toBe(1);
    expect(view.instruments[1]!.results).toEqual(new Array(24).fill(0));
  });

  it('draws the backlog from its level before the window, through each sample, to the pending count now', () => {
    const view = dayView({
      now,
      instruments: [],
      hourLabel: label,
      hours: [],
      sinks: [{ sink: 'lims', pending: 3 }],
      delivered: [{ sink: 'lims', hour: first + 2, delivered: 40 }],
      backlog: [
        { sink: 'lims', at: first * HOUR - 600_000, pending: 12 },
        { sink: 'lims', at: first * HOUR + 2 * HOUR, pending: 500 },
        { sink: 'postgres', at: first * HOUR + HOUR, pending: 7 },
      ],
    });
    expect(view.sinks[0]!.backlog).toEqual([
      { at: first * HOUR, pending: 12 },
      { at: first * HOUR + 2 * HOUR, pending: 500 },
      { at: now, pending: 3 },
    ]);
    expect(view.sinks[0]!.delivered[2]).toBe(40);
  });
});

describe('charts', () => {
  it('scales to 1, 2 or 5 times a power of ten', () => {
    expect([0, 2, 3, 7, 10, 11, 180, 2_700].map(niceMax)).toEqual([2, 2, 5, 10, 10, 20, 200, 5_000]);
  });

  it('draws a bar per busy hour with its title, labels the chart with its totals, and escapes an instrument id', () => {
    const view = dayView({
      now,
      instruments: ['chem<1>'],
      hourLabel: label,
      hours: [{ instrumentId: 'chem<1>', hour: first + 1, messages: 1, results: 1_250, rejected: 3 }],
      sinks: [{ sink: 'lims', pending: 0 }],
      delivered: [],
      backlog: [],
    });
    const html = daySection({
      gatewayId: 'g',
      now,
      instruments: [],
      sinks: [],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
      day: view,
    }).value;
    expect(html).toContain('aria-label="chem&lt;1&gt;: 1,250 results and 3 rejected in 24 hours"');
    expect(html.match(/<rect class="bar"/g)).toHaveLength(1);
    expect(html).toContain('<title>14:00: 1,250 results, 3 rejected</title>');
    expect(html).toContain('aria-label="lims: 0 delivered in 24 hours; backlog now 0, at most 0"');
    expect(html).not.toContain('<chem');
  });
});
