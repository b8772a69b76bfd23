// The gateway's HTTP listener: the status page (with its guard), /healthz and /metrics on one WebServer, reading
// the running parts through the providers the gateway passes in. The guard, /healthz and /metrics are built at start;
// the status and configuration pages (web-pages.ts) on the first request for one of them: their renderers and sources
// are some forty modules a start after a power cut would otherwise load before an analyzer's first ACK.
import { join } from 'node:path';
import { healthRoute, type LastReload } from '../web/health.js';
import { metricsRoute } from '../web/metrics.js';
import { WebServer } from '../web/server.js';
import { isLoopbackHost, StatusAuth } from '../web/status/auth.js';
import { FileRevokedSessions } from '../web/status/revoked-sessions.js';
import { TokenFile } from '../web/status/token-file.js';
import { gatewayFigures } from './gateway-figures.js';
import { reloadHealth, type ReloadStatus } from './reload.js';
import type { GatewayWebParts } from './web-parts.js';

/** Builds the listener (not started). */
export function gatewayWeb(parts: GatewayWebParts): WebServer {
  const { config, clock, store } = parts;
  const http = config.gateway.http;
  const pageLog = parts.log.child({ part: 'status-page' });
  const token = http.tokenFile ? new TokenFile(http.tokenFile, () => clock.monotonic(), pageLog) : undefined;
  const adminToken = http.adminTokenFile ? new TokenFile(http.adminTokenFile, () => clock.monotonic(), pageLog) : undefined;
  const auth = new StatusAuth({
    requireToken: !isLoopbackHost(http.host),
    ...(token ? { token: token.current } : {}),
    ...(adminToken ? { adminToken: adminToken.current } : {}),
    revoked: new FileRevokedSessions(join(config.gateway.dataDir, 'status-sessions-revoked.json')),
    now: clock.now,
  });
  const log = parts.summarized(parts.log.child({ part: 'http' }));
  const web = new WebServer({ host: http.host, port: http.port, log, guard: auth.guard, limits: { max: http.maxConnections } });
  web.routesOnDemand(async () => (await import('./web-pages.js')).gatewayPages(parts, auth, pageLog));
  web.route(
    healthRoute({
      ready: parts.ready,
      store: () => (store.db.open ? { writable: parts.disk()?.accepting() ?? true } : { writable: false, reason: 'store closed' }),
      ...(parts.disk() ? { disk: () => parts.disk()!.status() } : {}),
      instruments: parts.instruments,
      sinks: parts.sinkHealth,
      ...(parts.faults ? { unhandledErrors: () => parts.faults!.count } : {}),
      ...(parts.reload ? { configuration: () => reloadHealth(parts.reload!()), lastReload: () => lastReload(parts.reload!()) } : {}),
      clock: parts.clockStatus,
      thresholds: config.alerts,
    }),
  );
  const figures = { store, now: clock.now, instruments: parts.instruments, disk: parts.disk, clock: parts.clockStatus };
  parts.metrics.setGatewaySource(gatewayFigures(figures));
  web.route(metricsRoute(parts.metrics));
  return web;
}

// /healthz names the last reload, applied or refused, so a technician's `curl` sees that the new file is running.
function lastReload(status: ReloadStatus | null): LastReload | null {
  return status === null ? null : { at: new Date(status.at).toISOString(), outcome: status.outcome, summary: status.summary };
}
