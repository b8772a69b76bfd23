// The status page over real HTTP on 127.0.0.1: escaping, actions with actor and redirect, CSRF and origin
// refusals, the loopback Host check, and the live fragment's ETag.
import { afterEach, describe, expect, it } from 'vitest';
import { fields } from './fake-source.js';
import { call, csrfOf, post, sessionCookie, startHarness, type Harness } from './harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});

async function loopback(): Promise<Harness> {
  const h = await startHarness({ requireToken: false });
  harnesses.push(h);
  return h;
}

/** GET / as a fresh browser: the session cookie it is given and the page's CSRF token. */
async function visit(h: Harness): Promise<{ cookie: string; csrf: string; body: string }> {
  const reply = await call(h.port, 'GET', '/');
  expect(reply.status).toBe(200);
  const cookie = sessionCookie(reply);
  if (!cookie) throw new Error('no session cookie');
  return {
    cookie,
    body: reply.body,
    get csrf() {
      return csrfOf(reply.body);
    },
  };
}

describe('status page rendering', () => {
  it('shows instruments, sinks and results, and escapes every hostile value', async () => {
    const h = await loopback();
    const hostile = '<script>alert(1)</script>';
    h.source.addResult(hostile, { flags: ['"><img src=x onerror=alert(2)>'], unit: '</td><b>' });
    h.source.state.instruments.push({ ...h.source.state.instruments[0]!, id: 'hema&1', state: 'error', reason: '<iframe src=evil>' });
    h.source.state.deadLetters.push({
      sink: 'lims',
      dedupKey: 'key-"x',
      accession: hostile,
      loinc: null,
      reason: '<b>422</b>',
      attempts: 3,
      failedAt: h.clock.now,
    });
    h.source.state.rejectedCaptures.push({
      id: 7,
      instrumentId: 'chem1',
      protocol: 'astm',
      receivedAt: h.clock.now,
      reasons: [{ reason: 'unmapped code <X>', analyzerCode: '<X>' }],
    });
    const { body } = await visit(h);
    expect(body).not.toContain('<script>alert');
    expect(body).not.toContain('<img src=x');
    expect(body).not.toContain('<iframe');
    expect(body).not.toContain('<b>');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(body).toContain('hema&amp;1');
    expect(body).toContain('value="key-&quot;x"');
    expect(body).toContain('chem1');
    expect(body).toContain('/dev/serial/by-id/usb-FTDI_chem1-if00-port0');
    expect(body).toContain('5 s ago');
    expect(body).toMatch(/data-lamp="red"/);
  });

  it('sends a restrictive CSP and refuses framing', async () => {
    const h = await loopback();
    const reply = await call(h.port, 'GET', '/');
    expect(reply.headers['content-security-policy']).toContain("script-src 'self'");
    expect(reply.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(reply.headers['x-frame-options']).toBe('DENY');
    expect(sessionCookie(reply)).toBeDefined();
    expect(reply.headers['set-cookie']?.[0]).toMatch(/HttpOnly; SameSite=Strict/);
  });

  it('answers the live fragment with an ETag and 304 while nothing changed', async () => {
    const h = await loopback();
    const { cookie } = await visit(h);
    const first = await call(h.port, 'GET', '/fragment', { cookie });
    expect(first.status).toBe(200);
    const etag = first.headers.etag!;
    h.clock.now += 3000;
    expect((await call(h.port, 'GET', '/fragment', { cookie, 'if-none-match': etag })).status).toBe(304);
    h.source.addResult('A-NEW-1');
    const changed = await call(h.port, 'GET', '/fragment', { cookie, 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.body).toContain('A-NEW-1');
  });

  it('serves the snapshot as JSON', async () => {
    const h = await loopback();
    const reply = await call(h.port, 'GET', '/status.json');
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.body) as { instruments: { id: string }[] }).instruments[0]!.id).toBe('chem1');
  });
});

describe('actions', () => {
  it('retries a dead letter with the actor, redirects back, and shows the outcome once', async () => {
    const h = await loopback();
    h.source.addResult('A1');
    h.source.state.deadLetters.push({
      sink: 'lims',
      dedupKey: 'key-A1',
      accession: 'A1',
      loinc: '2823-3',
      reason: '422 unknown test',
      attempts: 1,
      failedAt: h.clock.now,
    });
    const { cookie, csrf } = await visit(h);
    const reply = await post(h.port, '/actions/retry-dead-letter', cookie, { csrf, sink: 'lims', key: 'key-A1' });
    expect(reply.status).toBe(303);
    expect(reply.headers.location).toBe('/#dead-letters');
    expect(h.source.audit).toEqual([{ at: h.clock.now, actor: 'web-local', action: 'dead-letter-retry', subject: 'key-A1' }]);
    const after = await call(h.port, 'GET', '/', { cookie });
    expect(after.body).toContain('1 dead letter for lims queued again.');
    expect((await call(h.port, 'GET', '/', { cookie })).body).not.toContain('queued again');
    await post(h.port, '/actions/retry-dead-letter', cookie, { csrf, sink: 'lims', key: 'key-A1' });
    expect((await call(h.port, 'GET', '/', { cookie })).body).toContain('<p class="flash flash-error" role="status">No such dead letter');
  });

  it('retries all of a sink, resolves conflicts both ways, and reprocesses a capture', async () => {
    const h = await loopback();
    for (const k of ['a', 'b'])
      h.source.state.deadLetters.push({ sink: 'postgres', dedupKey: k, accession: k, loinc: null, reason: 'x', attempts: 1, failedAt: 0 });
    for (const id of [1, 2])
      h.source.state.conflicts.push({
        id,
        dedupKey: `c${id}`,
        origin: 'ingest',
        reason: 'different value',
        detectedAt: 0,
        occurrences: 1,
        stored: fields('C'),
        incoming: fields('C', { valueText: '6.0' }),
      });
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [{ reason: 'unmapped code' }] });
    const { cookie, csrf, body } = await visit(h);
    expect(body).toMatch(/<tr class="differs"><th>Value<\/th><td>4\.1 mmol\/L<\/td><td>6\.0 mmol\/L<\/td>/);
    expect((await post(h.port, '/actions/retry-dead-letter', cookie, { csrf, sink: 'postgres', all: '1' })).status).toBe(303);
    expect((await post(h.port, '/actions/resolve-conflict', cookie, { csrf, id: '1', choice: 'keep' })).headers.location).toBe('/#conflicts');
    expect((await post(h.port, '/actions/resolve-conflict', cookie, { csrf, id: '2', choice: 'forward' })).status).toBe(303);
    expect((await post(h.port, '/actions/reprocess-capture', cookie, { csrf, id: '9' })).headers.location).toBe('/#rejected');
    expect(h.source.audit.map((a) => `${a.actor} ${a.action} ${a.subject}`)).toEqual([
      'web-local dead-letter-retry a',
      'web-local dead-letter-retry b',
      'web-local conflict-kept 1',
      'web-local conflict-forwarded 2',
      'web-local reprocessed capture:9',
    ]);
  });

  it('shows a failing action as not done, with its reason', async () => {
    const h = await loopback();
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [] });
    h.source.reprocessCapture = () => {
      throw new Error('database is locked');
    };
    const { cookie, csrf } = await visit(h);
    expect((await post(h.port, '/actions/reprocess-capture', cookie, { csrf, id: '9' })).status).toBe(303);
    expect((await call(h.port, 'GET', '/', { cookie })).body).toContain('flash-error" role="status">Not done: database is locked');
  });

  it('rejects malformed forms without calling the source', async () => {
    const h = await loopback();
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [] });
    const { cookie, csrf } = await visit(h);
    expect((await post(h.port, '/actions/resolve-conflict', cookie, { csrf, id: '1', choice: 'delete' })).status).toBe(400);
    expect((await post(h.port, '/actions/reprocess-capture', cookie, { csrf, id: '-1' })).status).toBe(400);
    expect((await post(h.port, '/actions/retry-dead-letter', cookie, { csrf, sink: 'lims' })).status).toBe(400);
    expect(h.source.audit).toEqual([]);
  });
});

describe('CSRF and origin', () => {
  it('refuses an action without the CSRF token, with a wrong one, or from another session', async () => {
    const h = await loopback();
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [] });
    const mine = await visit(h);
    const theirs = await visit(h);
    expect((await post(h.port, '/actions/reprocess-capture', mine.cookie, { id: '9' })).status).toBe(403);
    expect((await post(h.port, '/actions/reprocess-capture', mine.cookie, { id: '9', csrf: 'forged' })).status).toBe(403);
    expect((await post(h.port, '/actions/reprocess-capture', mine.cookie, { id: '9', csrf: theirs.csrf })).status).toBe(403);
    expect((await post(h.port, '/actions/reprocess-capture', undefined, { id: '9', csrf: mine.csrf })).status).toBe(403);
    expect(h.source.audit).toEqual([]);
  });

  it('refuses an action posted from another origin even with a valid token', async () => {
    const h = await loopback();
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [] });
    const { cookie, csrf } = await visit(h);
    const foreign = await post(h.port, '/actions/reprocess-capture', cookie, { id: '9', csrf }, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await post(h.port, '/actions/reprocess-capture', cookie, { id: '9', csrf }, { origin: 'null' })).status).toBe(403);
    expect(h.source.audit).toEqual([]);
  });

  it('accepts a configured proxy origin and host', async () => {
    const h = await startHarness({ requireToken: false, allowedHosts: ['gateway.lab'], allowedOrigins: ['https://gateway.lab'] });
    harnesses.push(h);
    h.source.state.rejectedCaptures.push({ id: 9, instrumentId: 'chem1', protocol: 'astm', receivedAt: 0, reasons: [] });
    const page = await call(h.port, 'GET', '/', { host: 'gateway.lab' });
    expect(page.status).toBe(200);
    const cookie = sessionCookie(page)!;
    const reply = await post(
      h.port,
      '/actions/reprocess-capture',
      cookie,
      { id: '9', csrf: csrfOf(page.body) },
      { host: 'gateway.lab', origin: 'https://gateway.lab' },
    );
    expect(reply.status).toBe(303);
  });

  it('on loopback answers only to loopback host names (DNS rebinding)', async () => {
    const h = await loopback();
    expect((await call(h.port, 'GET', '/', { host: `evil.example:${h.port}` })).status).toBe(421);
    expect((await call(h.port, 'GET', '/healthz', { host: `evil.example:${h.port}` })).status).toBe(421);
    expect((await call(h.port, 'GET', '/', { host: `localhost:${h.port}` })).status).toBe(200);
    expect((await call(h.port, 'GET', '/healthz')).status).toBe(200);
    expect((await call(h.port, 'GET', '/metrics')).status).toBe(200);
  });
});
