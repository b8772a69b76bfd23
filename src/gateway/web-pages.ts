// The status and configuration pages of the gateway's listener, built on the first request for a page (web.ts): the
// routes, the page's view of the running parts, and the configuration pages when the gateway runs from a file.
import type { Log } from '../log.js';
import type { Route } from '../web/server.js';
import type { StatusAuth } from '../web/status/auth.js';
import { gatewayStatusSource } from '../web/status/gateway-source.js';
import { statusRoutes } from '../web/status/routes.js';
import type { StatusSource } from '../web/status/source.js';
import { configRoutes } from '../web/config/routes.js';
import { twoWayInstruments } from '../config/two-way-checks.js';
import { gatewayConfigSource } from './config-source.js';
import { reprocessCapture } from './reprocess.js';
import type { GatewayWebParts } from './web-parts.js';

/** Every route of the status page, and of the configuration pages when `parts.configuration` is given. */
export function gatewayPages(parts: GatewayWebParts, auth: StatusAuth, log: Log): Route[] {
  const { clock } = parts;
  const routes = statusRoutes(statusSource(parts), { auth, now: clock.now, monotonic: () => clock.monotonic(), log });
  if (!parts.configuration) return routes;
  const source = gatewayConfigSource({
    ...parts.configuration,
    bound: parts.bound,
    instruments: parts.instruments,
    store: parts.store,
    log,
    now: clock.now,
    delivered: () => notifyAll(parts),
  });
  return [...routes, ...configRoutes({ source, auth, gatewayId: parts.config.gateway.id, now: clock.now, log })];
}

// The page also says how rejected captures are bounded; the bound and its count live in retention, not in the store.
function statusSource(parts: GatewayWebParts): StatusSource {
  const { store } = parts;
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
      if (summary.inserted > 0) notifyAll(parts);
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

/** Wakes every drain: results were stored outside an instrument's ingest (reprocessed captures). */
function notifyAll(parts: GatewayWebParts): void {
  for (const drain of parts.drains()) drain.notify();
}
