// Every body read from upstream stops at its cap: a real HTTP server on 127.0.0.1 answers every request with 200 and
// 64 MB (declared, or chunked without a length), and each reader (the LIMS results sink, its token endpoint, the
// orders lookup, the dispatch sink, the FHIR sink's /metadata and batch) gives its own typed error, counted, after
// reading little more than the cap: the server sees the connection dropped long before its body is sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createFhirSink } from '../../src/sinks/fhir.js';
import { createDispatchSink } from '../../src/sinks/lims-dispatch.js';
import { createOrdersClient, ordersEndpoint } from '../../src/sinks/lims-orders.js';
import { createLimsSink } from '../../src/sinks/lims.js';
import { createTokenProvider, type TokenProvider } from '../../src/sinks/lims-token.js';
import { readAnswerBody } from '../../src/sinks/answer-body.js';
import { captureLog } from '../lims/harness.js';
import { fhirRow, sinkOptions } from '../fhir/harness.js';
import { contractRow } from './contract.js';

const CAP = 64 * 1024;
const BODY = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);

/** A server answering 200 with BODY bytes of `a` to every request (a JSON string, were it ever finished). */
class Flood {
  sent = 0;
  private server: Server | undefined;
  constructor(private readonly declared: boolean) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', ...(this.declared ? { 'content-length': String(BODY) } : {}) });
      const pump = (): void => {
        while (this.sent < BODY && !res.destroyed) {
          this.sent += CHUNK.length;
          if (!res.write(CHUNK)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const timeouts = { connectMs: 1000, headersMs: 5000, bodyMs: 5000 };
const live = (): AbortSignal => new AbortController().signal;
const staticToken: TokenProvider = { token: async () => ({ ok: true, token: 't' }), refresh: async () => ({ ok: true, token: 't' }), redact: (t) => t };
let flood: Flood | undefined;
const agents: Agent[] = [];

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await flood?.stop();
  flood = undefined;
});

async function upstream(declared: boolean): Promise<{ url: string; counted: string[]; agent: Agent }> {
  flood = new Flood(declared);
  const agent = new Agent();
  agents.push(agent);
  return { url: await flood.start(), counted: [], agent };
}

/** Far less than the body went out: reading stopped at the cap (socket buffers aside). */
const stoppedEarly = (): void => expect(flood!.sent).toBeLessThan(BODY / 2);

describe.each([
  ['a declared length', true],
  ['a chunked body', false],
])('an upstream answer over its cap, with %s', (_, declared) => {
  it('the LIMS results sink: a retry of the sink, with its reason, counted', async () => {
    const { url, counted, agent } = await upstream(declared);
    const sink = createLimsSink(
      { baseUrl: url, resourcePath: '/records', concurrency: 1, timeouts, auth: { kind: 'static', tokenFile: '/t' }, maxAnswerBytes: CAP },
      { dispatcher: agent, now: Date.now, log: captureLog(), gatewayId: 'gw', tokens: staticToken, overCap: () => counted.push('lims') },
    );
    const [outcome] = await sink.deliver([contractRow('lims', 1, 1)], live());
    expect(outcome).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringContaining('size cap') });
    expect(counted).toEqual(['lims']);
    stoppedEarly();
  });

  it('the token endpoint: no token, with its reason', async () => {
    const { url, counted, agent } = await upstream(declared);
    const tokens = createTokenProvider(
      { kind: 'oauth2', tokenUrl: `${url}/oauth/token`, clientId: 'gw', clientSecretFile: '/s' },
      { dispatcher: agent, now: Date.now, timeoutMs: 5000, readSecret: async () => 'secret', maxAnswerBytes: CAP, overCap: () => counted.push('token') },
    );
    expect(await tokens.token()).toEqual({ ok: false, reason: 'token endpoint answer over the size cap' });
    expect(counted).toEqual(['token']);
    stoppedEarly();
  });

  it('an orders lookup and a dispatch: the lookup fails as a LIMS error, the dispatch is retried', async () => {
    const { url, counted, agent } = await upstream(declared);
    const endpoint = {
      ...ordersEndpoint({ baseUrl: url, ordersPath: '/orders', timeouts, maxAnswerBytes: CAP }, staticToken, 1, agent),
      overCap: () => counted.push('x'),
    };
    const lookup = await createOrdersClient(endpoint).specimen('S1', 'an1', live());
    expect(lookup).toEqual({ kind: 'failed', reason: 'lims-error', detail: 'orders answer over the size cap (sinks.lims.maxAnswerBytes)' });
    const payload = JSON.stringify({ orderId: 'o1', instrumentId: 'an1', dispatchedAt: '2026-07-01T08:00:00Z' });
    const row = { id: 1, sink: 'lims-dispatch', dedupKey: 'd', recordId: 'r', attempts: 0, etag: null, payload, payloadSha256: '' };
    const [outcome] = await createDispatchSink(endpoint, Date.now).deliver([row], live());
    expect(outcome).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringContaining('size cap') });
    expect(counted).toEqual(['x', 'x']);
  });

  it('the FHIR sink: /metadata, then a batch answer, each a retry of the sink', async () => {
    const { url, counted, agent } = await upstream(declared);
    for (const createMode of ['auto', 'update-as-create'] as const) {
      const sink = createFhirSink(sinkOptions(`${url}/fhir`, { createMode, maxAnswerBytes: CAP }), {
        dispatcher: agent,
        now: Date.now,
        log: captureLog(),
        overCap: () => counted.push(createMode),
      });
      const [outcome] = await sink.deliver([fhirRow(1, 1)], live());
      expect(outcome).toMatchObject({ kind: 'retry', scope: 'sink', reason: expect.stringContaining('size cap') });
    }
    expect(counted).toEqual(['auto', 'update-as-create']);
    stoppedEarly();
  });
});

describe('the capped reader', () => {
  const stream = (sizes: number[]) => {
    let destroyed = false;
    return {
      get destroyed() {
        return destroyed;
      },
      destroy: () => (destroyed = true),
      async *[Symbol.asyncIterator]() {
        for (const n of sizes) if (!destroyed) yield Buffer.alloc(n, 0x62);
      },
    };
  };

  it('reads a body up to its cap exactly, and stops one byte past it', async () => {
    expect(await readAnswerBody(stream([3, 4, 3]), undefined, 10)).toEqual({ kind: 'body', text: 'b'.repeat(10) });
    const over = stream([3, 4, 4, 1000]);
    expect(await readAnswerBody(over, undefined, 10)).toEqual({ kind: 'too-large', maxBytes: 10 });
    expect(over.destroyed).toBe(true);
  });

  it('refuses a declared length over the cap before reading', async () => {
    const s = stream([1]);
    expect(await readAnswerBody(s, '11', 10)).toEqual({ kind: 'too-large', maxBytes: 10 });
    expect(s.destroyed).toBe(true);
  });

  it('reads UTF-8 split across chunks', async () => {
    const text = 'Nováček ž';
    const bytes = Buffer.from(text);
    const chunks = [bytes.subarray(0, 4), bytes.subarray(4, 5), bytes.subarray(5)];
    const s = {
      destroy: () => undefined,
      async *[Symbol.asyncIterator]() {
        yield* chunks;
      },
    };
    expect(await readAnswerBody(s, String(bytes.length), 100)).toEqual({ kind: 'body', text });
  });
});
