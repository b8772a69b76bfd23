// /healthz: one verdict from everything the gateway depends on. `failing` means results cannot be accepted
// (store not writable, disk below the floor, still recovering); `degraded` means it works but a person should
// look (an instrument not connected, a sink backlog over the alert thresholds, dead letters).
import type { ClockSync } from '../clock-sync.js';
import type { DiskStatus } from '../disk-guard.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import type { PortStatus } from '../transport/supervisor.js';
import { send, type Route } from './server.js';

export type HealthStatus = 'ok' | 'degraded' | 'failing';

/** Everything health is computed from, as the injected providers report it right now. */
export interface HealthSnapshot {
  ready: boolean;
  store: { writable: boolean; reason?: string };
  disk?: DiskStatus;
  instruments: PortStatus[];
  sinks: SinkHealth[];
  /** Rejections nothing handled since start: each is a bug, logged with its stack. */
  unhandledErrors?: number;
  /** What a person must do about the configuration file (a reload refused, changes waiting for a restart). */
  configuration?: string[];
  /** The last configuration reload, applied or refused (null before the first). */
  lastReload?: LastReload | null;
  /** Whether the wall clock is synchronised. */
  clock?: ClockSync;
}

/** What /healthz says of the last configuration reload (`systemctl reload labgate`). */
export interface LastReload {
  /** ISO 8601, UTC. */
  at: string;
  outcome: 'applied' | 'refused';
  summary: string;
}

export interface AlertThresholds {
  backlog: number;
  oldestAgeMinutes: number;
}

/** The JSON body of /healthz. */
export interface HealthReport {
  status: HealthStatus;
  reasons: string[];
  instruments: PortStatus[];
  sinks: SinkHealth[];
  disk?: DiskStatus;
  lastReload?: LastReload;
  clock?: ClockSync;
}

/** Providers the composition root injects; each is called once per request. */
export interface HealthSources {
  ready: () => boolean;
  store: () => { writable: boolean; reason?: string };
  disk?: () => DiskStatus;
  instruments: () => PortStatus[];
  sinks: () => SinkHealth[];
  unhandledErrors?: () => number;
  configuration?: () => string[];
  lastReload?: () => LastReload | null;
  clock?: () => ClockSync;
  thresholds: AlertThresholds;
}

/** Pure verdict from a snapshot. */
export function evaluateHealth(snapshot: HealthSnapshot, thresholds: AlertThresholds): HealthReport {
  const failing: string[] = [];
  const degraded: string[] = [];
  if (!snapshot.ready) failing.push('starting: store recovery not finished');
  if (!snapshot.store.writable) failing.push(`store not writable${snapshot.store.reason ? `: ${snapshot.store.reason}` : ''}`);
  if (snapshot.disk && !snapshot.disk.accepting) failing.push(`disk: ${snapshot.disk.reason ?? 'below the free-space floor'}; not accepting results`);
  for (const i of snapshot.instruments) {
    // Detection answers nothing, so the analyzer keeps its results until a person copies the settings found.
    if (i.detection) degraded.push(`instrument ${i.instrument}: detecting its serial settings, not configured yet (${i.detection.summary})`);
    if ((i.lostMessages ?? 0) > 0)
      degraded.push(
        `instrument ${i.instrument}: ${i.lostMessages} message${i.lostMessages === 1 ? '' : 's'} lost since start (the store could not take them in time; the analyzer does not resend)`,
      );
    if (i.state === 'connected' || i.state === 'stopped') continue;
    degraded.push(`instrument ${i.instrument}: ${i.state}${i.reason ? ` (${i.reason})` : ''}`);
  }
  for (const s of snapshot.sinks) {
    if (s.pending > thresholds.backlog) degraded.push(`sink ${s.sink}: ${s.pending} pending, over the alert threshold of ${thresholds.backlog}`);
    if (s.oldestAgeSeconds > thresholds.oldestAgeMinutes * 60) {
      degraded.push(`sink ${s.sink}: oldest pending result is ${Math.floor(s.oldestAgeSeconds / 60)} min old, over ${thresholds.oldestAgeMinutes} min`);
    }
    if (s.circuit === 'open') degraded.push(`sink ${s.sink}: paused${s.reason ? ` (${s.reason})` : ''}`);
    if (s.dead > 0) degraded.push(`sink ${s.sink}: ${s.dead} dead letter${s.dead === 1 ? '' : 's'} need an operator`);
    if ((s.conflicts ?? 0) > 0) degraded.push(`sink ${s.sink}: ${s.conflicts} conflict${s.conflicts === 1 ? '' : 's'} need a person`);
  }
  degraded.push(...(snapshot.configuration ?? []));
  // The gateway works with a wrong clock (keys hold the analyzer's own time), but what it stamps says so.
  if (snapshot.clock?.state === 'unsynchronised') degraded.push(`clock not synchronised (${snapshot.clock.source}): receive times stamped now may be wrong`);
  const bugs = snapshot.unhandledErrors ?? 0;
  if (bugs > 0) degraded.push(`${bugs} unhandled error${bugs === 1 ? '' : 's'} since start (a bug; the journal has the stack)`);
  const status: HealthStatus = failing.length ? 'failing' : degraded.length ? 'degraded' : 'ok';
  const report: HealthReport = { status, reasons: [...failing, ...degraded], instruments: snapshot.instruments, sinks: snapshot.sinks };
  if (snapshot.disk) report.disk = snapshot.disk;
  if (snapshot.lastReload) report.lastReload = snapshot.lastReload;
  if (snapshot.clock) report.clock = snapshot.clock;
  return report;
}

/** Calls every provider and evaluates; a provider that throws makes the gateway failing, with its message. */
export function collectHealth(sources: HealthSources): HealthReport {
  const safe = <T>(what: string, f: () => T, fallback: T, failures: string[]): T => {
    try {
      return f();
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
      return fallback;
    }
  };
  const failures: string[] = [];
  const snapshot: HealthSnapshot = {
    ready: safe('readiness', sources.ready, false, failures),
    store: safe('store', sources.store, { writable: false, reason: 'store check failed' }, failures),
    instruments: safe('instruments', sources.instruments, [], failures),
    sinks: safe('sinks', sources.sinks, [], failures),
  };
  const disk = sources.disk && safe('disk', sources.disk, undefined, failures);
  if (sources.unhandledErrors) snapshot.unhandledErrors = sources.unhandledErrors();
  if (sources.configuration) snapshot.configuration = safe('configuration', sources.configuration, [], failures);
  if (sources.lastReload) snapshot.lastReload = safe('configuration', sources.lastReload, null, failures);
  if (sources.clock) snapshot.clock = sources.clock();
  if (disk) snapshot.disk = disk;
  const report = evaluateHealth(snapshot, sources.thresholds);
  if (failures.length) return { ...report, status: 'failing', reasons: [...failures, ...report.reasons] };
  return report;
}

/** HTTP status for a verdict: load balancers and `curl -f` see failing as 503, degraded still serves. */
export function httpStatusOf(status: HealthStatus): number {
  return status === 'failing' ? 503 : 200;
}

/** GET /healthz: the report as JSON; 200 for ok/degraded, 503 for failing. */
export function healthRoute(sources: HealthSources): Route {
  return {
    method: 'GET',
    path: '/healthz',
    handler: (_req, res) => {
      const report = collectHealth(sources);
      send(res, httpStatusOf(report.status), 'application/json; charset=utf-8', JSON.stringify(report) + '\n');
    },
  };
}
