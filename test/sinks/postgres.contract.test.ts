// The sink contract against the PostgreSQL sink (a real server in CI, embedded PGlite otherwise), reached through a
// TCP proxy that can cut the network. A refused row is one the table's CHECK constraint rejects (a data error).
import { createPostgresSink } from '../../src/sinks/postgres.js';
import { testDatabase } from '../postgres/pg.js';
import { TcpProxy } from '../postgres/tcp-proxy.js';
import { sinkContract } from './contract.js';

sinkContract('PostgreSQL', async () => {
  const db = await testDatabase();
  const target = new URL(db.url);
  const proxy = await TcpProxy.start(target.hostname, Number(target.port || 5432));
  const sink = createPostgresSink({
    url: proxy.url(db.url),
    schema: db.schema,
    poolSize: 1,
    gatewayId: 'gw-contract',
    connectTimeoutMs: 1_000,
    idleTimeoutMs: 100,
  });
  let refusals = 0;
  return {
    sink,
    name: 'postgres',
    refuse: async (row) => {
      await db.pool.query(`ALTER TABLE "${db.schema}".result_load ADD CONSTRAINT refused_${++refusals} CHECK (dedup_key <> '${row.dedupKey}')`);
    },
    held: async (row) => {
      const res = await db.pool.query<{ value: number | null }>(`SELECT value FROM "${db.schema}".result_load WHERE dedup_key = $1`, [row.dedupKey]);
      return { count: res.rowCount ?? 0, value: res.rows[0]?.value ?? null };
    },
    outage: async (down) => (down ? proxy.cut() : proxy.restore()),
    close: async () => {
      await sink.close();
      await proxy.close();
      await db.close();
    },
  };
});
