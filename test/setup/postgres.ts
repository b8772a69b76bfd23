// vitest globalSetup: the PostgreSQL every PostgreSQL test uses. LABGATE_TEST_PG_URL (CI: the real server) when set;
// otherwise embedded PGlite served over the wire protocol. Each run gets a schema prefix; tests create schemas
// under it (test/postgres/pg.ts) and the teardown drops them all, so runs never see each other's rows.
import { randomBytes } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test PostgreSQL server. */
    pgUrl: string;
    /** Prefix of every schema this run creates (`lg_<random>`). */
    pgSchemaPrefix: string;
    /** 'server' (LABGATE_TEST_PG_URL) or 'pglite'. */
    pgKind: 'server' | 'pglite';
  }
}

/** Starts (or finds) PostgreSQL and returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prefix = `lg_${randomBytes(4).toString('hex')}`;
  const given = process.env.LABGATE_TEST_PG_URL;
  const embedded = given ? null : await startPglite();
  const url = given ?? embedded!.url;
  project.provide('pgUrl', url);
  project.provide('pgSchemaPrefix', prefix);
  project.provide('pgKind', given ? 'server' : 'pglite');
  return async () => {
    if (embedded) return embedded.stop();
    await dropRunSchemas(url, prefix);
  };
}

async function dropRunSchemas(url: string, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`, [`${prefix}%`]);
    for (const { nspname } of res.rows) await client.query(`DROP SCHEMA "${nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function startPglite(): Promise<{ url: string; stop: () => Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create();
  // The gate lets one connection through at a time; the slack covers a closed one PGlite has not yet detached.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  const upstream = Number(server.getServerConn().split(':').pop());
  const gate = await listen(serialGate(upstream));
  return {
    url: `postgres://postgres@127.0.0.1:${gate.port}/postgres`,
    stop: async () => {
      await new Promise<void>((resolve) => gate.server.close(() => resolve()));
      await server.stop();
      await db.close();
    },
  };
}

// PGlite is one backend: a second simultaneous connection would interleave protocol messages. The gate queues
// connections and lets one through at a time, so parallel test files wait their turn instead of failing.
function serialGate(upstreamPort: number): Server {
  const waiting: Socket[] = [];
  let busy = false;
  const next = (): void => {
    if (busy) return;
    const client = waiting.shift();
    if (!client) return;
    if (client.destroyed) return next();
    busy = true;
    const up = connect(upstreamPort, '127.0.0.1');
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      client.destroy();
      up.destroy();
      busy = false;
      next();
    };
    for (const s of [client, up]) {
      s.on('error', finish);
      s.on('close', finish);
    }
    client.pipe(up).pipe(client);
    client.resume();
  };
  return createServer((client) => {
    client.pause();
    client.on('error', () => client.destroy());
    waiting.push(client);
    next();
  });
}

async function listen(server: Server): Promise<{ server: Server; port: number }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('gate has no address');
  return { server, port: address.port };
}
