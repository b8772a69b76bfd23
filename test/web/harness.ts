// A real WebServer on 127.0.0.1 port 0 with the status page, /healthz and a /metrics stand-in, over a
// FakeStatusSource; plus a raw node:http client so tests control every header (Host, Origin, Cookie).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { silentLog, type Log } from '../../src/log.js';
import { healthRoute } from '../../src/web/health.js';
import { send, WebServer } from '../../src/web/server.js';
import type { RevokedSessions } from '../../src/web/status/revoked-sessions.js';
import { statusPage } from '../../src/web/status/routes.js';
import { FakeStatusSource, instrument, sink } from './fake-source.js';

export const quiet: Log = silentLog;
export const TOKEN = 'correct-horse-battery-staple-7f3a9c';

/** A running gateway web listener for one test. */
export interface Harness {
  base: string;
  port: number;
  source: FakeStatusSource;
  clock: { now: number };
  stop(): Promise<void>;
}

/** Starts the listener; `requireToken` stands for a non-loopback address (tests can only listen on loopback). */
export async function startHarness(options: {
  requireToken: boolean;
  token?: string | (() => string | undefined);
  revoked?: RevokedSessions;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}): Promise<Harness> {
  const clock = { now: Date.parse('2026-11-30T12:00:00Z') };
  const now = (): number => clock.now;
  const source = new FakeStatusSource(now);
  source.state.instruments.push(instrument('chem1', { lastByteAt: clock.now - 5000, lastMessageAt: clock.now - 5000, messagesToday: 12, resultsToday: 40 }));
  source.state.sinks.push(sink('postgres'), sink('lims'));
  const token = options.token ?? (options.requireToken ? TOKEN : undefined);
  const { allowedHosts, allowedOrigins } = options;
  const revoked = options.revoked ? { revoked: options.revoked } : {};
  const page = statusPage(source, {
    requireToken: options.requireToken,
    ...(token ? { token } : {}),
    ...revoked,
    allowedHosts,
    allowedOrigins,
    now,
    snapshotCacheMs: 0,
    log: quiet,
  });
  const health = healthRoute({
    ready: () => true,
    store: () => ({ writable: true }),
    instruments: () => [],
    sinks: () => [],
    thresholds: { backlog: 100, oldestAgeMinutes: 10 },
  });
  const metrics = {
    method: 'GET' as const,
    path: '/metrics',
    handler: (_req: unknown, res: Parameters<typeof send>[0]) => send(res, 200, 'text/plain', 'labgate_up 1\n'),
  };
  const server = new WebServer({ host: '127.0.0.1', port: 0, log: quiet, guard: page.guard, routes: [...page.routes, health, metrics] });
  const address = await server.start();
  return { base: `http://127.0.0.1:${address.port}`, port: address.port, source, clock, stop: () => server.stop() };
}

/** A response, fully read. */
export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly the given headers (Host defaults to 127.0.0.1:port). */
export function call(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string, localAddress?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { host: `127.0.0.1:${port}`, ...headers };
    if (body !== undefined) all['content-length'] = Buffer.byteLength(body);
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: all, ...(localAddress ? { localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `name=value` of the session cookie a reply sets. */
export function sessionCookie(reply: Reply): string | undefined {
  const set = reply.headers['set-cookie']?.find((c) => c.startsWith('labgate_session='));
  return set?.split(';')[0];
}

/** The CSRF token from a rendered page. */
export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF token in the page');
  return match[1];
}

/** A urlencoded POST as a browser on this origin sends it. */
export function post(
  port: number,
  path: string,
  cookie: string | undefined,
  fields: Record<string, string>,
  extra: Record<string, string> = {},
  localAddress?: string,
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', origin: `http://127.0.0.1:${port}`, ...extra };
  if (cookie) headers.cookie = cookie;
  return call(port, 'POST', path, headers, new URLSearchParams(fields).toString(), localAddress);
}
