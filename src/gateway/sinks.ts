// The configured sinks, built from the `sinks` section. Secrets are read from files here, never from the YAML.
import type { Config } from '../config/schema.js';
import { sinkLogger, type Logger } from '../logger.js';
import { createFhirSink } from '../sinks/fhir.js';
import { createLimsSink } from '../sinks/lims.js';
import { createPostgresSink } from '../sinks/postgres.js';
import type { Sink } from '../delivery/contract.js';
import type { TokenProvider } from '../sinks/lims-token.js';

/** Names of the enabled sinks, in a fixed order (postgres, lims, fhir): each new result gets one outbox row per name. */
export function enabledSinkNames(config: Config): string[] {
  const names: string[] = [];
  if (config.sinks.postgres && config.sinks.postgres.enabled) names.push('postgres');
  if (config.sinks.lims && config.sinks.lims.enabled) names.push('lims');
  if (config.sinks.fhir && config.sinks.fhir.enabled) names.push('fhir');
  return names;
}

/** Names of the enabled sinks that also take quality-control results (the others never see one). */
export function qcSinkNames(config: Config): string[] {
  return config.sinks.fhir?.enabled && config.sinks.fhir.qc ? ['fhir'] : [];
}

/** Builds every enabled sink. */
export function buildSinks(config: Config, deps: { log: Logger; now: () => number; limsTokens?: TokenProvider; overCap?: (upstream: string) => void }): Sink[] {
  const overCap = (upstream: string): { overCap?: () => void } => (deps.overCap ? { overCap: () => deps.overCap!(upstream) } : {});
  const sinks: Sink[] = [];
  const pgConfig = config.sinks.postgres;
  if (pgConfig && pgConfig.enabled) {
    sinks.push(createPostgresSink({ ...pgConfig, gatewayId: config.gateway.id }, { log: sinkLogger(deps.log, 'postgres') }));
  }
  const limsConfig = config.sinks.lims;
  if (limsConfig && limsConfig.enabled) {
    sinks.push(
      createLimsSink(limsConfig, {
        now: deps.now,
        log: sinkLogger(deps.log, 'lims'),
        gatewayId: config.gateway.id,
        ...(deps.limsTokens ? { tokens: deps.limsTokens } : {}),
        ...overCap('lims'),
      }),
    );
  }
  const fhirConfig = config.sinks.fhir;
  if (fhirConfig && fhirConfig.enabled) sinks.push(createFhirSink(fhirConfig, { now: deps.now, log: sinkLogger(deps.log, 'fhir'), ...overCap('fhir') }));
  return sinks;
}
