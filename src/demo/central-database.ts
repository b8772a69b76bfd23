// The demo's central database: real PostgreSQL compiled to WebAssembly (PGlite), served on 127.0.0.1 over the
// wire protocol (pglite-socket), so the gateway's ordinary pg sink talks to it as to any server. PGlite is one
// backend: the demo's own connection (migrations) is closed before the gateway's one connection opens, and the
// final count reads PGlite in-process (PGlite serializes it with the socket's queries) once deliveries are done.
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { migrateCentral, quoteIdent } from '../sinks/postgres-schema.js';

/** One row of result_load as the summary needs it. */
export interface LoadedRow {
  dedupKey: string;
  loadCount: number;
}

/** A running embedded PostgreSQL. */
export class CentralDatabase {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    /** postgres://postgres@127.0.0.1:PORT/postgres */
    readonly url: string,
  ) {}

  /** Starts PGlite in memory and serves it on a free port of 127.0.0.1. */
  static async start(): Promise<CentralDatabase> {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await PGlite.create();
    // One connection at a time; the second slot covers a closed connection PGlite has not yet detached.
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 2 });
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
    return new CentralDatabase(db, server, `postgres://postgres@127.0.0.1:${port}/postgres`);
  }

  /** Creates the central schema as `labgate pg-migrate` would, over the wire; returns the version reached. */
  async migrate(schema: string): Promise<number> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await migrateCentral(client, schema)).to;
    } finally {
      await client.end();
    }
  }

  /** Every row of result_load: its key and how many times it was loaded. */
  async resultLoad(schema: string): Promise<LoadedRow[]> {
    const res = await this.db.query<{ dedup_key: string; load_count: number }>(
      `SELECT dedup_key, load_count FROM ${quoteIdent(schema)}.result_load ORDER BY dedup_key`,
    );
    return res.rows.map((r) => ({ dedupKey: r.dedup_key.trim(), loadCount: Number(r.load_count) }));
  }

  async stop(): Promise<void> {
    await this.server.stop().catch(() => {});
    await this.db.close();
  }
}
