// A duration in the words an operator reads at a glance (labgate status, the status page, a clock step or skew).

/** `3h 12m`, `45s`: a duration an operator reads at a glance. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return 'unknown (nothing delivered lately)';
  if (seconds < 60) return `${seconds}s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m}m ${seconds % 60}s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ${m % 60}m` : `${Math.floor(h / 24)}d ${h % 24}h`;
}
