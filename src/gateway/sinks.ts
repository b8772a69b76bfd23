// The configured sinks, built from the `sinks` section. Secrets are read from files here, never from the YAML.
// Each sink's module (and its client library: pg, undici) is loaded only when that sink is configured.
import type { Agent } from 'undici';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { sinkLogger, type Logger } from '../logger.js';
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

/** Builds every enabled sink, loading the modules of those only. */
export async function buildSinks(
  config: Config,
  deps: { log: Logger; now: () => number; monotonic: () => number; limsTokens?: TokenProvider; overCap?: (upstream: string) => void },
): Promise<Sink[]> {
  const overCap = (upstream: string): { overCap?: () => void } => (deps.overCap ? { overCap: () => deps.overCap!(upstream) } : {});
  const sinks: Sink[] = [];
  const pgConfig = config.sinks.postgres;
  if (pgConfig && pgConfig.enabled) {
    const { createPostgresSink } = await import('../sinks/postgres.js');
    sinks.push(createPostgresSink({ ...pgConfig, gatewayId: config.gateway.id }, { log: sinkLogger(deps.log, 'postgres') }));
  }
  const limsConfig = config.sinks.lims;
  if (limsConfig && limsConfig.enabled) {
    const { createLimsSink } = await import('../sinks/lims.js');
    sinks.push(
      createLimsSink(limsConfig, {
        now: deps.now,
        monotonic: deps.monotonic,
        log: sinkLogger(deps.log, 'lims'),
        gatewayId: config.gateway.id,
        ...(deps.limsTokens ? { tokens: deps.limsTokens } : {}),
        ...overCap('lims'),
      }),
    );
  }
  const fhirConfig = config.sinks.fhir;
  if (fhirConfig && fhirConfig.enabled) {
    const { createFhirSink } = await import('../sinks/fhir.js');
    sinks.push(createFhirSink(fhirConfig, { now: deps.now, monotonic: deps.monotonic, log: sinkLogger(deps.log, 'fhir'), ...overCap('fhir') }));
  }
  return sinks;
}

/** The LIMS's bearer token for every LIMS exchange (results, orders, dispatches), or undefined without a LIMS. Close `agent` at stop. */
export async function limsTokens(
  config: Config,
  clock: Pick<Clock, 'now' | 'monotonic'>,
  overCap?: () => void,
): Promise<{ tokens: TokenProvider; agent: Agent } | undefined> {
  const lims = config.sinks.lims;
  if (!lims?.enabled) return undefined;
  const [{ Agent }, { createTokenProvider }] = await Promise.all([import('undici'), import('../sinks/lims-token.js')]);
  const agent = new Agent({ connections: 1, connect: { timeout: lims.timeouts.connectMs } });
  const times = { now: () => clock.now(), monotonic: () => clock.monotonic() };
  const deps = { dispatcher: agent, ...times, timeoutMs: lims.timeouts.headersMs, maxAnswerBytes: lims.maxAnswerBytes, ...(overCap ? { overCap } : {}) };
  return { agent, tokens: createTokenProvider(lims.auth, deps) };
}
