// The LIMS test server's own contract, spoken to with plain undici requests (no sink in between).
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { createLimsServer, type LimsServer } from '../../src/lims-server/server.js';

let server: LimsServer | undefined;
const agent = new Agent();
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function call(method: 'GET' | 'PUT' | 'POST', path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await agent.request({ origin: server!.url, path, method, headers, body: body ?? null });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

async function started(): Promise<string> {
  server = createLimsServer({ clients: [{ clientId: 'c', clientSecret: 's' }] });
  await server.start();
  const tok = await call(
    'POST',
    '/oauth/token',
    { 'content-type': 'application/x-www-form-urlencoded' },
    'grant_type=client_credentials&client_id=c&client_secret=s',
  );
  return `Bearer ${(JSON.parse(tok.body) as { access_token: string }).access_token}`;
}

const put = (auth: string, id: string, body: string, extra: Record<string, string> = {}) =>
  call('PUT', `/api/v1/results/${id}`, { authorization: auth, 'x-envelope-version': '1', 'idempotency-key': `"${id}:k"`, ...extra }, body);

describe('LIMS test server contract', () => {
  it('requires a live bearer token, the envelope version and an idempotency key', async () => {
    const auth = await started();
    expect((await put('Bearer nope', 'r1', '{}')).status).toBe(401);
    expect((await call('PUT', '/api/v1/results/r1', { authorization: auth, 'idempotency-key': '"k"' }, '{}')).status).toBe(400);
    expect((await call('PUT', '/api/v1/results/r1', { authorization: auth, 'x-envelope-version': '1' }, '{}')).status).toBe(400);
    expect((await put(auth, 'r1', '{')).status).toBe(400);
  });

  it('replays a repeated key, refuses its reuse for another body, and never applies twice', async () => {
    const auth = await started();
    const first = await put(auth, 'r1', '{"a":1}', { 'if-none-match': '*' });
    const again = await put(auth, 'r1', '{"a":1}', { 'if-none-match': '*' });
    expect(first.status).toBe(201);
    expect(again).toMatchObject({ status: 201, headers: { etag: first.headers.etag, 'idempotent-replayed': 'true' } });
    expect((await put(auth, 'r1', '{"a":2}')).status).toBe(422);
    expect(server!.appliedCount('r1')).toBe(1);
  });

  it('enforces If-None-Match: * and If-Match', async () => {
    const auth = await started();
    const first = await put(auth, 'r1', '{"a":1}', { 'if-none-match': '*' });
    const create = await call(
      'PUT',
      '/api/v1/results/r1',
      { authorization: auth, 'x-envelope-version': '1', 'idempotency-key': '"other"', 'if-none-match': '*' },
      '{"a":1}',
    );
    expect(create.status).toBe(412);
    const stale = await call(
      'PUT',
      '/api/v1/results/r1',
      { authorization: auth, 'x-envelope-version': '1', 'idempotency-key': '"k2"', 'if-match': '"old"' },
      '{"a":2}',
    );
    expect(stale.status).toBe(412);
    const ok = await call(
      'PUT',
      '/api/v1/results/r1',
      { authorization: auth, 'x-envelope-version': '1', 'idempotency-key': '"k3"', 'if-match': String(first.headers.etag) },
      '{"a":2}',
    );
    expect(ok.status).toBe(200);
    expect((await call('GET', '/api/v1/results/r1', { authorization: auth })).body).toBe('{"a":2}');
  });

  it('is told to misbehave over its admin endpoint', async () => {
    const auth = await started();
    expect((await call('POST', '/_admin/faults', {}, '{"rate503":1,"retryAfterSeconds":9}')).status).toBe(200);
    expect(await put(auth, 'r1', '{}')).toMatchObject({ status: 503, headers: { 'retry-after': '9' } });
    expect(JSON.parse((await call('GET', '/_admin/stats')).body)).toMatchObject({ records: 0, tokensIssued: 1 });
  });

  it('comes back on the same port after a stop (an outage by refusal)', async () => {
    await started();
    const url = server!.url;
    await server!.stop();
    await server!.start();
    expect(server!.url).toBe(url);
  });
});
