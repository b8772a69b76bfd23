// The gateway's HTTP listener: the status page (with its guard), /healthz and /metrics on one WebServer, reading
// the running parts through the providers the gateway passes in.
import { join } from 'node:path';
import type { ClockStatus } from './clock-part.js';
import type { Config } from '../config/schema.js';
import type { DiskGuard } from '../disk-guard.js';
import type { Drain } from '../delivery/drain.js';
import type { BoundInstrument } from '../driver-registry.js';
import type { Clock } from '../clock.js';
import type { LogSummary } from '../log-summary.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { ProcessFaults } from '../process-faults.js';
import type { Retention } from '../store/retention.js';
import type { Store } from '../store/store.js';
import type { PortStatus } from '../transport/supervisor.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import { healthRoute, type LastReload } from '../web/health.js';
import { metricsRoute } from '../web/metrics.js';
import { WebServer } from '../web/server.js';
import { isLoopbackHost } from '../web/status/auth.js';
import { gatewayStatusSource } from '../web/status/gateway-source.js';
import { FileRevokedSessions } from '../web/status/revoked-sessions.js';
import { statusPage } from '../web/status/routes.js';
import type { StatusSource } from '../web/status/source.js';
import { TokenFile } from '../web/status/token-file.js';
import { gatewayFigures } from './gateway-figures.js';
import { reloadHealth, type ReloadStatus } from './reload.js';
import { reprocessCapture } from './reprocess.js';
import { gatewayConfigSource, type ConfigSourceParts } from './config-source.js';
import { configRoutes } from '../web/config/routes.js';
import { twoWayInstruments } from '../config/two-way-checks.js';

/** The running parts the listener reads; providers, because they change after start. */
export interface GatewayWebParts {
  config: Config;
  clock: Clock;
  /** Whether the wall clock is synchronised, and its last step (clock-part.ts). */
  clockStatus: () => ClockStatus;
  log: Logger;
  /** Wraps a logger so its repeated lines are summarized (and flushed at stop). */
  summarized: (log: Logger) => LogSummary;
  store: Store;
  metrics: Metrics;
  faults?: ProcessFaults;
  ready: () => boolean;
  disk: () => DiskGuard | undefined;
  instruments: () => PortStatus[];
  /** Detection on the serial ports no instrument names (gateway/new-ports.ts). */
  newPorts?: () => PortStatus[];
  sinkHealth: () => SinkHealth[];
  drains: () => Drain[];
  bound: () => ReadonlyMap<string, BoundInstrument>;
  retention: () => Retention | undefined;
  /** The last configuration reload's outcome (null before the first, or without a configuration file). */
  reload?: () => ReloadStatus | null;
  /** The configuration pages (/configure), when the gateway runs from a configuration file it can reload. */
  configuration?: Omit<ConfigSourceParts, 'bound' | 'instruments' | 'store' | 'log' | 'now' | 'delivered'>;
}

/** Builds the listener (not started). */
export function gatewayWeb(parts: GatewayWebParts): WebServer {
  const { config, clock, store } = parts;
  const http = config.gateway.http;
  const pageLog = parts.log.child({ part: 'status-page' });
  const token = http.tokenFile ? new TokenFile(http.tokenFile, () => clock.monotonic(), pageLog) : undefined;
  const adminToken = http.adminTokenFile ? new TokenFile(http.adminTokenFile, () => clock.monotonic(), pageLog) : undefined;
  const page = statusPage(statusSource(parts), {
    requireToken: !isLoopbackHost(http.host),
    ...(token ? { token: token.current } : {}),
    ...(adminToken ? { adminToken: adminToken.current } : {}),
    revoked: new FileRevokedSessions(join(config.gateway.dataDir, 'status-sessions-revoked.json')),
    now: clock.now,
    monotonic: () => clock.monotonic(),
    log: pageLog,
  });
  const log = parts.summarized(parts.log.child({ part: 'http' }));
  const web = new WebServer({ host: http.host, port: http.port, log, guard: page.guard, routes: page.routes, limits: { max: http.maxConnections } });
  if (parts.configuration) {
    const delivered = (): void => parts.drains().forEach((d) => d.notify());
    const source = gatewayConfigSource({
      ...parts.configuration,
      bound: parts.bound,
      instruments: parts.instruments,
      store,
      log: pageLog,
      now: clock.now,
      delivered,
    });
    for (const route of configRoutes({ source, auth: page.auth, gatewayId: config.gateway.id, now: clock.now, log: pageLog })) web.route(route);
  }
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

// The page also says how rejected captures are bounded; the bound and its count live in retention, not in the store.
function statusSource(parts: GatewayWebParts): StatusSource {
  const { store } = parts;
  const notifyAll = (): void => parts.drains().forEach((d) => d.notify());
  const source = gatewayStatusSource({
    gatewayId: parts.config.gateway.id,
    now: parts.clock.now,
    store,
    instruments: parts.instruments,
    ...(parts.newPorts ? { newPorts: parts.newPorts } : {}),
    drains: () => parts.drains().map((d) => d.status()),
    twoWay: twoWayInstruments(parts.config),
    wake: (sink) =>
      parts
        .drains()
        .find((d) => d.status().sink === sink)
        ?.notify(),
    mappingOf: (id) => parts.bound().get(id)?.profile.mapping,
    ...(parts.reload ? { reload: parts.reload } : {}),
    reprocess: (id, actor) => {
      const summary = reprocessCapture(store, parts.bound(), id, actor);
      if (summary.inserted > 0) notifyAll();
      return summary;
    },
  });
  return {
    ...source,
    snapshot: async () => {
      const bound = parts.retention()?.rejectedBound();
      const disk = parts.disk()?.status();
      const gateway = {
        clock: parts.clockStatus(),
        ...(disk ? { disk: { accepting: disk.accepting, freeBytes: disk.freeBytes ?? null, floorBytes: disk.floorBytes, reason: disk.reason ?? null } } : {}),
      };
      return { ...(await source.snapshot()), ...(bound ? { rejectedRetention: bound } : {}), ...gateway };
    },
  };
}
