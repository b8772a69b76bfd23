// Log lines that repeat under a flood (a NAK per frame, a failed write per ACK, a refused connection per attempt) are
// summarized: the first warning or error of a kind is logged at once, the ones after it within the interval are
// counted, and one line at the end of the interval says how many there were. A babbling analyzer or a port scan then
// costs a line per kind per interval, not one per event that journald's rate limit would drop along with the rest.
import type { Clock } from './clock.js';
import type { Log } from './log.js';

/** Default summary interval. */
export const SUMMARY_INTERVAL_MS = 10_000;

type Level = 'warn' | 'error';

interface Window {
  level: Level;
  msg: string;
  suppressed: number;
  last: object;
  timer: unknown;
}

/** Warnings and errors per message text at most once per interval; the repeats become one summary line. */
export class LogSummary implements Log {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly log: Log,
    private readonly clock: Clock,
    private readonly intervalMs = SUMMARY_INTERVAL_MS,
  ) {}

  info(obj: object, msg?: string): void {
    this.log.info(obj, msg);
  }

  debug(obj: object, msg?: string): void {
    this.log.debug(obj, msg);
  }

  /** Never summarized: a fatal line is the last one. */
  fatal(obj: object, msg?: string): void {
    this.log.fatal(obj, msg);
  }

  warn(obj: object, msg?: string): void {
    this.repeatable('warn', obj, msg ?? '');
  }

  error(obj: object, msg?: string): void {
    this.repeatable('error', obj, msg ?? '');
  }

  /** Writes the pending summaries now and disarms their timers (at stop). */
  flush(): void {
    for (const [key, w] of this.windows) {
      this.clock.clearTimeout(w.timer);
      this.windows.delete(key);
      if (w.suppressed > 0) this.summarize(w);
    }
  }

  private repeatable(level: Level, obj: object, msg: string): void {
    const key = `${level}\0${msg}`;
    const open = this.windows.get(key);
    if (open) {
      open.suppressed += 1;
      open.last = obj;
      return;
    }
    this.log[level](obj, msg);
    const w: Window = { level, msg, suppressed: 0, last: obj, timer: undefined };
    this.windows.set(key, w);
    this.arm(key, w);
  }

  // A window with repeats ends in a summary and opens the next one, so a steady flood is one line per interval;
  // a quiet window closes, and the next line of that kind is logged at once again.
  private arm(key: string, w: Window): void {
    w.timer = this.clock.setTimeout(() => {
      if (w.suppressed === 0) return void this.windows.delete(key);
      this.summarize(w);
      w.suppressed = 0;
      this.arm(key, w);
    }, this.intervalMs);
    // A pending summary never keeps a stopping process alive (Node's timers can be unreferenced; a test clock's not).
    (w.timer as { unref?: () => void } | undefined)?.unref?.();
  }

  private summarize(w: Window): void {
    this.log[w.level]({ ...w.last, repeated: w.suppressed, intervalMs: this.intervalMs }, `${w.msg} (repeated ${w.suppressed} more times)`);
  }
}
