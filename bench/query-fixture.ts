// What the host query benches share: the LIMS test server in its own process holding the specimens' orders and
// answering each lookup after `latencyMs`, the real orders client asking it, a store in a temporary directory, and
// the two ends of an in-memory cable.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import type { TestSpecimen } from '../src/lims-server/server.js';
import type { InboundMessage } from '../src/message.js';
import type { IngestOutcome } from '../src/runner-contract.js';
import { createOrdersClient, ordersEndpoint, type OrdersClient } from '../src/sinks/lims-orders.js';
import { createTokenProvider } from '../src/sinks/lims-token.js';
import { openStore, type Store } from '../src/store/store.js';
import { FakeTransport } from '../src/transport/fake.js';
import { startLimsChild } from './lims-child.js';

/** The LIMS child, its client, a store; `close` undoes all of it. */
export interface QueryRig {
  client: OrdersClient;
  store: Store;
  ingest(message: InboundMessage): IngestOutcome;
  close(): Promise<void>;
}

/** Starts the LIMS child with `orders` at `latencyMs` a lookup, the orders client (4 connections) and a store. */
export async function startQueryRig(orders: TestSpecimen[], latencyMs: number): Promise<QueryRig> {
  const lims = await startLimsChild({ staticTokens: ['bench'], orders, faults: { latencyMs } });
  const dir = mkdtempSync(join(tmpdir(), 'labgate-bench-query-'));
  writeFileSync(join(dir, 'token'), 'bench');
  const agent = new Agent();
  const tokens = createTokenProvider({ kind: 'static', tokenFile: join(dir, 'token') }, { dispatcher: agent, now: Date.now, timeoutMs: 5_000 });
  const client = createOrdersClient(
    ordersEndpoint({ baseUrl: lims.url, ordersPath: '/orders', timeouts: { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 } }, tokens, 4),
  );
  const store = openStore({ dataDir: join(dir, 'data'), sinks: [], now: Date.now });
  return {
    client,
    store,
    ingest: (m) => ({ kind: 'committed', summary: store.ingest(m), rejections: m.rejections }),
    close: async () => {
      await client.close();
      await agent.close();
      store.close();
      await lims.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An analyzer end and a labgate end of one in-memory cable. */
export function cable(): { analyzer: FakeTransport; gateway: FakeTransport } {
  const [analyzer, gateway] = [new FakeTransport(), new FakeTransport()];
  analyzer.onWrite((d) => gateway.emitData(d));
  gateway.onWrite((d) => analyzer.emitData(d));
  return { analyzer, gateway };
}

/** The `q` quantile of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
