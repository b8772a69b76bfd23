// How values read on the page: relative times, durations, and the red/amber/green verdicts. Pure.
import { formatDuration } from '../../duration.js';
import type { InstrumentState, InstrumentView, SinkView, StatusSnapshot } from './source.js';

/** At-a-glance verdict. */
export type Lamp = 'green' | 'amber' | 'red';

const STATE_LABEL: Record<InstrumentState, string> = {
  connected: 'Connected',
  'waiting-for-device': 'Waiting for device',
  error: 'Error',
  stopped: 'Stopped',
};

/** The technician's words for a link state. */
export function stateLabel(state: InstrumentState): string {
  return STATE_LABEL[state];
}

/** `12 s ago`, `3 min ago`, `in 20 s`; `never` for null. The client script keeps the same wording. */
export function relativeTime(at: number | null, now: number): string {
  if (at === null) return 'never';
  const seconds = Math.round((now - at) / 1000);
  const text = shortDuration(Math.abs(seconds));
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

/** `45 s`, `12 min`, `3 h`, `2 d`. */
export function shortDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)} h`;
  return `${Math.floor(seconds / 86_400)} d`;
}

/** Time to drain a backlog, as `labgate status` prints it. */
export function drainTime(etaSeconds: number | null): string {
  return formatDuration(etaSeconds);
}

// Not connected is red whatever the cause: the technician who just plugged a cable needs to see it is not talking.
/** An instrument's verdict: red when it is not talking, amber when it talks but results were rejected today. */
export function instrumentLamp(i: InstrumentView): Lamp {
  if (i.state === 'error' || i.state === 'waiting-for-device') return 'red';
  // Detecting: the port listens and answers nothing until a person copies the settings found.
  if (i.state === 'stopped' || i.rejected > 0 || (i.lostMessages ?? 0) > 0 || (i.refusedOverLimit ?? 0) > 0 || i.detection) return 'amber';
  return 'green';
}

/** A sink's verdict: red when paused, amber when something waits for a person (dead letters, conflicts). */
export function sinkLamp(s: SinkView): Lamp {
  if (s.circuit !== 'delivering') return 'red';
  return s.dead > 0 || s.conflicts > 0 ? 'amber' : 'green';
}

/** The page's headline verdict: the worst lamp, amber also when a work queue is not empty. */
export function overallLamp(s: StatusSnapshot): Lamp {
  const lamps = [...s.instruments.map(instrumentLamp), ...s.sinks.map(sinkLamp)];
  if (lamps.includes('red')) return 'red';
  const queued = s.deadLetters.length + s.conflicts.length + s.rejectedCaptures.length > 0;
  // A refused reload or a change waiting for a restart needs a person as much as a queue does.
  const reload = s.reload !== undefined && (s.reload.outcome === 'refused' || s.reload.waitingForRestart.length > 0);
  if (s.disk?.accepting === false) return 'red';
  const clock = s.clock?.state === 'unsynchronised';
  return lamps.includes('amber') || queued || reload || clock ? 'amber' : 'green';
}

/** What is red, in a few words each (`chem1: error`, `lims: paused`), for the headline. */
export function redItems(s: StatusSnapshot): string[] {
  const instruments = s.instruments.filter((i) => instrumentLamp(i) === 'red').map((i) => `${i.id}: ${stateLabel(i.state).toLowerCase()}`);
  const sinks = s.sinks.filter((k) => sinkLamp(k) === 'red').map((k) => `${k.sink}: paused`);
  const disk = s.disk?.accepting === false ? ['disk full: not accepting results'] : [];
  return [...disk, ...instruments, ...sinks];
}

/** ISO-8601 for a `<time datetime>` attribute. */
export function isoTime(at: number): string {
  return new Date(at).toISOString();
}
