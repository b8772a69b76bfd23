// The per-sink delivery report behind `labgate status`: pure, from outbox counts and the measured rate.
import { formatDuration } from '../duration.js';
import type { SinkCounts } from '../store/outbox-operator.js';

/** One sink's line of the status report. Never carries a secret or patient data. */
export interface SinkReport extends SinkCounts {
  /** Age of the oldest pending row in seconds, or null. */
  oldestPendingAgeS: number | null;
  /** Results marked sent per second over the measurement window. */
  recentPerSecond: number;
  /** Seconds to deliver the backlog at the measured rate; null when nothing was delivered lately. */
  etaSeconds: number | null;
}

/** Combines counts and the sent-in-window count (`sentInWindow`, over `windowMs`) into the report. */
export function sinkReport(c: SinkCounts, sentInWindow: number, windowMs: number, now: number): SinkReport {
  const recentPerSecond = sentInWindow / (windowMs / 1000);
  return {
    ...c,
    oldestPendingAgeS: c.oldestPendingAt === null ? null : Math.max(0, Math.round((now - c.oldestPendingAt) / 1000)),
    recentPerSecond,
    etaSeconds: c.pending === 0 ? 0 : recentPerSecond > 0 ? Math.ceil(c.pending / recentPerSecond) : null,
  };
}

/** The human-readable table. */
export function formatReport(reports: readonly SinkReport[]): string {
  if (reports.length === 0) return 'outbox is empty: nothing has been queued for any sink yet\n';
  return (
    reports
      .map((r) =>
        [
          `${r.sink}:`,
          `  pending ${r.pending}, sent ${r.sent}, dead ${r.dead}, conflicts ${r.conflict}`,
          `  oldest pending ${r.oldestPendingAgeS === null ? '-' : formatDuration(r.oldestPendingAgeS)}`,
          `  rate ${r.recentPerSecond.toFixed(1)}/s over the last 5 minutes; backlog drained in ${formatDuration(r.etaSeconds)}`,
        ].join('\n'),
      )
      .join('\n') + '\n'
  );
}
