// Every list the status page and /status.json show is bounded, with a count of the rest, over a real store and a real
// token-protected listener: an instrument's codes a page at a time (the first on the page, the others at /codes and
// /codes.json, refused cleanly for a query that is not one), the work queues' oldest with their totals, a rejected
// message's first reasons, a refused reload's first problems.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../src/log.js';
import type { Store } from '../../src/store/store.js';
import type { PortStatus } from '../../src/transport/supervisor.js';
import { WebServer } from '../../src/web/server.js';
import { gatewayStatusSource, type GatewayStatusParts } from '../../src/web/status/gateway-source.js';
import { statusPage } from '../../src/web/status/routes.js';
import { message, result, scratch } from '../store/store-fixtures.js';
import { call, post, sessionCookie, TOKEN } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const chem: PortStatus = {
  instrument: 'chem-1',
  endpoint: '/dev/serial/by-id/usb-FTDI_chem-if00',
  state: 'connected',
  since: 0,
  reconnects: 0,
  failedOpens: 0,
  counters: { messages: 0, inserted: 0, rejected: 0, naks: 0, checksumErrors: 0, discarded: 0 },
};
const RECEIVED = Date.UTC(2026, 6, 1, 14, 30, 5);
const unmapped = (code: string) => ({ reason: `unmapped test code '${code}'`, analyzerCode: code, observed: { value: '1', unit: null } });

/** A real store holding what `fill` puts in it, behind the status page on a token-protected listener, logged in. */
async function serving(fill: (store: Store) => void, parts: Partial<GatewayStatusParts> = {}) {
  const s = scratch();
  cleanups.push(s.cleanup);
  const mappingOf = parts.mappingOf ?? (() => undefined);
  const store = s.open({ mappingOf });
  fill(store);
  const source = gatewayStatusSource({ gatewayId: 'gw-1', now: s.clock.now, store, drains: () => [], instruments: () => [chem], mappingOf, ...parts });
  const page = statusPage(source, { requireToken: true, token: TOKEN, now: s.clock.now, snapshotCacheMs: 0, log: silentLog });
  const server = new WebServer({ host: '127.0.0.1', port: 0, log: silentLog, guard: page.guard, routes: page.routes });
  const { port } = await server.start();
  cleanups.push(() => server.stop());
  const cookie = sessionCookie(await post(port, '/login', undefined, { token: TOKEN }))!;
  const get = (path: string, withCookie = true) => call(port, 'GET', path, withCookie ? { cookie } : {});
  return { store, get };
}

// 2,000 codes in ten messages a minute apart, 600 of them needing a mapping (the others are mapped).
const MAPPED = Array.from({ length: 10 }, (_, m) => Array.from({ length: 140 }, (_, i) => ({ code: `M${m}_${i}`, loinc: '2345-7', unit: null }))).flat();
function twoThousandCodes(store: Store): void {
  for (let m = 0; m < 10; m++) {
    const codes = [...Array.from({ length: 140 }, (_, i) => unmapped(`M${m}_${i}`)), ...Array.from({ length: 60 }, (_, i) => unmapped(`U${m}_${i}`))];
    const msg = message([], codes);
    store.ingest({ ...msg, capture: { ...msg.capture, receivedAt: RECEIVED + m * 60_000 } });
  }
}

const codesIn = (html: string): string[] => [...html.matchAll(/<tr data-code="([^"]+)"/g)].map((m) => m[1]!);

describe('an instrument that sent 2,000 codes, 600 of them needing a mapping', () => {
  it('the page lists its first hundred, those needing a mapping, and /codes the next ones, page by page', async () => {
    const { get } = await serving(twoThousandCodes, { mappingOf: () => MAPPED });
    const page = await get('/');
    expect(page.status).toBe(200);
    // Bounded: the page with a hundred codes, whatever the store holds.
    expect(Buffer.byteLength(page.body)).toBeLessThan(80_000);
    const first = codesIn(page.body);
    expect(first).toHaveLength(100);
    expect(first.every((c) => c.startsWith('U'))).toBe(true);
    expect(page.body).toContain('Codes 1-100 of the 500 kept are listed');
    expect(page.body).toContain('href="/codes?instrument=chem-1&amp;page=2"');

    const json = await get('/status.json');
    expect(Buffer.byteLength(json.body)).toBeLessThan(80_000);
    const [codes] = (JSON.parse(json.body) as { codesSeen: { total: number; needMapping: number; page: number; pages: number; codes: unknown[] }[] }).codesSeen;
    expect(codes).toMatchObject({ total: 500, needMapping: 500, page: 1, pages: 5 });
    expect(codes!.codes).toHaveLength(100);

    const second = await get('/codes?instrument=chem-1&page=2');
    expect(second.status).toBe(200);
    expect(second.body).toContain('Page 2 of 5');
    expect(second.body).toContain('href="/codes?instrument=chem-1&amp;page=1"');
    expect(second.body).toContain('href="/codes?instrument=chem-1&amp;page=3"');
    const next = codesIn(second.body);
    expect(next).toHaveLength(100);
    expect(next.filter((c) => first.includes(c))).toEqual([]);
    // Page 1 holds the newest (messages 9 and 8: 120 codes, by code within each instant), page 2 the next ones.
    expect(first.filter((c) => c.startsWith('U9_'))).toHaveLength(60);
    expect(next.filter((c) => c.startsWith('U7_'))).toHaveLength(60);

    const all = new Set<string>();
    for (let n = 1; n <= 5; n++) {
      const reply = await get(`/codes.json?instrument=chem-1&page=${n}`);
      expect(reply.status).toBe(200);
      for (const c of (JSON.parse(reply.body) as { codes: { code: string; problem: string | null }[] }).codes) all.add(`${c.code}:${c.problem}`);
    }
    expect(all.size).toBe(500);
    expect([...all].every((c) => c.startsWith('U') && c.endsWith(':not mapped'))).toBe(true);
    const past = await get('/codes.json?instrument=chem-1&page=6');
    expect(past.status).toBe(404);
    expect(JSON.parse(past.body)).toEqual({ error: "chem-1's codes fill 5 pages; there is no page 6." });
  });

  it('asks for a session as the page does, and refuses a query that is not one cleanly, echoing none of it', async () => {
    const { get } = await serving(twoThousandCodes, { mappingOf: () => MAPPED });
    expect((await get('/codes?instrument=chem-1&page=2', false)).status).toBe(401);
    expect((await get('/codes.json?instrument=chem-1&page=2', false)).status).toBe(401);
    const hostile = [
      'instrument=%3Cscript%3Ealert(1)%3C%2Fscript%3E&page=2',
      'instrument=chem-1%00&page=1',
      `instrument=${'a'.repeat(65)}`,
      'page=2',
      'instrument=chem-1&instrument=chem-2',
      'instrument=chem-1&page=0',
      'instrument=chem-1&page=-1',
      'instrument=chem-1&page=1e3',
      'instrument=chem-1&page=2&page=3',
      'instrument=chem-1&page=%3Cb%3E',
      `instrument=chem-1&page=${'9'.repeat(50)}`,
    ];
    for (const query of hostile) {
      for (const path of ['/codes', '/codes.json']) {
        const reply = await get(`${path}?${query}`);
        expect(reply.status, `${path}?${query}`).toBe(400);
        expect(reply.body).not.toMatch(/<script|<b>|alert/);
      }
    }
    const stranger = await get('/codes?instrument=chem-2&page=1');
    expect(stranger.status).toBe(404);
    expect(stranger.body).toContain('No configured instrument has that id.');
    expect(stranger.body).not.toContain('chem-2');
    expect((await get('/codes?instrument=chem-1&page=999999')).status).toBe(404);
  });
});

describe('the work queues and other lists', () => {
  it('count every dead letter and rejected message in their headings, list the oldest hundred, and a message only its first reasons', async () => {
    const { get } = await serving((store) => {
      // The oldest rejected message carries 5,000 reasons; 149 more follow.
      store.ingest(
        message(
          [],
          Array.from({ length: 5_000 }, (_, i) => unmapped(`R${i}`)),
        ),
      );
      for (let i = 0; i < 149; i++) store.ingest(message([], [unmapped('UBG')], `H|\\^&\rR|1|UBG|${i}\rL|1\r`));
      store.ingest(message(Array.from({ length: 120 }, (_, i) => result(i))));
      const rows = store.outbox.claimDue('lims', 500);
      store.outbox.recordOutcomes(
        'lims',
        rows,
        rows.map(() => ({ kind: 'dead', reason: '422 unknown test' })),
        rows.map(() => null),
      );
    });
    const page = (await get('/')).body;
    expect(Buffer.byteLength(page)).toBeLessThan(250_000);
    expect(page).toMatch(/<h2>Dead letters <span class="count">120<\/span><\/h2><p class="note" data-listed="100">The oldest 100 of 120 are listed/);
    expect(page).toMatch(/<h2>Rejected messages <span class="count">150<\/span><\/h2><p class="note" data-listed="100">The oldest 100 of 150 are listed/);
    expect(page).toContain('<li class="more" data-more-reasons="4990">and 4990 more</li>');
    expect(page.match(/<tr data-capture=/g)).toHaveLength(100);
    const json = JSON.parse((await get('/status.json')).body) as {
      queueTotals: unknown;
      rejectedCaptures: { reasons: unknown[]; reasonCount: number }[];
      deadLetters: unknown[];
    };
    expect(json.queueTotals).toEqual({ deadLetters: 120, conflicts: 0, rejectedCaptures: 150 });
    expect(json.deadLetters).toHaveLength(100);
    expect(json.rejectedCaptures).toHaveLength(100);
    expect(json.rejectedCaptures[0]).toMatchObject({ reasonCount: 5_000 });
    expect(json.rejectedCaptures[0]!.reasons).toHaveLength(10);
  });

  it("lists a refused reload's first 20 problems and says how many more there are", async () => {
    const problems = Array.from({ length: 3_000 }, (_, i) => ({ path: `instruments[${i}].id`, message: 'expected letters, digits, dot, dash or underscore' }));
    const reload = { at: RECEIVED, outcome: 'refused' as const, summary: 'labgate.yaml was not applied (3000 problems)', problems, waitingForRestart: [] };
    const { get } = await serving(() => {}, { reload: () => reload });
    const page = (await get('/')).body;
    expect(page.match(/<li><code>instruments\[/g)).toHaveLength(20);
    expect(page).toContain('<li class="more" data-more-problems="2980">and 2980 more');
    const json = JSON.parse((await get('/status.json')).body) as { reload: { problems: unknown[]; problemCount: number } };
    expect(json.reload.problems).toHaveLength(20);
    expect(json.reload.problemCount).toBe(3_000);
  });
});
