// From the configuration to a pg pool: URL, TLS (CA file, verify-full), password from a file, jit off.
import { readFileSync } from 'node:fs';
import type { PoolConfig } from 'pg';

/** Connection settings of the PostgreSQL sink. */
export interface PostgresConnectionOptions {
  /** postgres://user@host:5432/db, without a password and without sslmode (tls decides). */
  url: string;
  passwordFile?: string;
  tls?: { caFile?: string; mode: 'disable' | 'require' | 'verify-full' };
  poolSize: number;
  connectTimeoutMs?: number;
  /** Server-side statement_timeout and the client's own read timeout for one batch. */
  statementTimeoutMs?: number;
  idleTimeoutMs?: number;
}

/** The pg PoolConfig for these options; secrets are read here, from files, never from the YAML. */
export function poolConfig(o: PostgresConnectionOptions, readSecret: (path: string) => string = readTrimmed): PoolConfig {
  const statementTimeout = o.statementTimeoutMs ?? 30_000;
  return {
    connectionString: o.passwordFile ? withPassword(o.url, readSecret(o.passwordFile)) : o.url,
    ssl: sslConfig(o.tls, readSecret),
    max: o.poolSize,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: o.idleTimeoutMs ?? 30_000,
    // With JIT on, the first unnest upsert on every new connection spends about a second compiling.
    options: '-c jit=off',
    statement_timeout: statementTimeout,
    // The client-side bound covers a server that stopped answering (a cut network drops no RST).
    query_timeout: statementTimeout + 5_000,
    keepAlive: true,
    application_name: 'labgate',
  };
}

// pg reads the connection string over its other options, and a URL with a user but no password counts as an empty
// password there: a separate `password` option would never reach a server that checks it. So the password goes into
// the URL, percent-encoded (pg decodes it); the result only ever lives in the pool's options, never in a log line.
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}

function sslConfig(tls: PostgresConnectionOptions['tls'], readSecret: (path: string) => string): PoolConfig['ssl'] {
  if (!tls || tls.mode === 'disable') return false;
  // 'require' encrypts without authenticating the server (libpq's sslmode=require); verify-full also checks the name.
  if (tls.mode === 'require') return { rejectUnauthorized: false };
  return { rejectUnauthorized: true, ...(tls.caFile ? { ca: readSecret(tls.caFile) } : {}) };
}

function readTrimmed(path: string): string {
  return readFileSync(path, 'utf8').trim();
}
