// What the gateway hands its listener for the configuration pages, kept apart from the pages' source
// (config-source.ts), which is loaded only with the pages, on the first request for one (web.ts).
import type { PortStatus } from '../transport/supervisor.js';
import type { NewPortView } from '../web/config/source.js';
import type { ConfigSourceParts } from './config-source.js';
import type { GatewayDeps } from './gateway-deps.js';

/** The configuration pages' part of the web listener, when the gateway runs from a configuration file it can reload. */
export function configurationPages(
  deps: Pick<GatewayDeps, 'configFile' | 'gatewayZone' | 'beforeConfigRename'>,
  gateway: Pick<ConfigSourceParts, 'running' | 'reload' | 'newPorts'>,
): { configuration?: Omit<ConfigSourceParts, 'bound' | 'instruments' | 'store' | 'log' | 'now' | 'delivered'> } {
  if (!deps.configFile) return {};
  const hook = deps.beforeConfigRename ? { beforeRename: deps.beforeConfigRename } : {};
  return { configuration: { file: deps.configFile, gatewayZone: deps.gatewayZone ?? (() => 'UTC'), ...gateway, ...hook } };
}

/** A new port's detection as the configuration pages show it. */
export function newPortView(p: PortStatus): NewPortView {
  const d = p.detection;
  return { path: p.endpoint, state: d?.state ?? 'searching', summary: d?.summary ?? p.reason ?? '', note: d?.note ?? null, found: d?.settings ?? null };
}
