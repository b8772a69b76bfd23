// Whether the wall clock is synchronised. A Raspberry Pi has no battery-backed clock: until NTP answers after a boot,
// its time is the one saved at the last shutdown (or 1970 after a hard power cut on some images), and a laboratory
// network without NTP leaves it wrong for good. Times labgate stamps then are unreliable, and the page, /healthz and
// /metrics say so. Asked of, in order:
// - systemd-timesyncd: it creates /run/systemd/timesync/synchronized at its first synchronisation of the boot (and its
//   directory when it starts); readable under the service's sandbox, and a file test, so it is asked every time;
// - systemd-timedated over D-Bus (`timedatectl show`), whose NTPSynchronized reads the kernel's adjtimex status, so it
//   sees chrony and ntpd too (adjtimex itself is refused to the service: ProtectClock=); a child process, so it is
//   asked only when timesyncd is not running, and rested after a failure;
// - neither: unknown, said as such.
import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What is known of the wall clock's synchronisation. */
export type ClockSyncState = 'synchronised' | 'unsynchronised' | 'unknown';

/** The state and who said so. */
export interface ClockSync {
  state: ClockSyncState;
  /** `systemd-timesyncd`, `timedated (NTPSynchronized)`, or why nothing could be asked. */
  source: string;
}

/** Asks once; never throws. */
export type ClockSyncProbe = () => Promise<ClockSync>;

/** What the probe asks (tests give their own). */
export interface ClockSyncProbeOptions {
  /** systemd-timesyncd's state directory. Default /run/systemd/timesync. */
  timesyncDir?: string;
  /** timedated's NTPSynchronized: true, false, or undefined when it could not be asked. */
  timedated?: () => Promise<boolean | undefined>;
  /** How long an answer of timedated serves (a minute), or its silence does (ten minutes). */
  timedatedEveryMs?: { answered: number; silent: number };
  monotonic: () => number;
}

const UNKNOWN: ClockSync = { state: 'unknown', source: 'no systemd-timesyncd, and timedated did not answer' };

/** The probe of a real gateway. */
export function clockSyncProbe(options: ClockSyncProbeOptions): ClockSyncProbe {
  const dir = options.timesyncDir ?? '/run/systemd/timesync';
  const timedated = options.timedated ?? askTimedated;
  const every = options.timedatedEveryMs ?? { answered: 60_000, silent: 600_000 };
  let asked: { until: number; sync: ClockSync } | undefined;
  return async () => {
    if (await exists(join(dir, 'synchronized'))) return { state: 'synchronised', source: 'systemd-timesyncd' };
    if (await exists(dir)) return { state: 'unsynchronised', source: 'systemd-timesyncd (no synchronisation since boot)' };
    if (asked && options.monotonic() < asked.until) return asked.sync;
    const said = await timedated();
    const sync: ClockSync = said === undefined ? UNKNOWN : { state: said ? 'synchronised' : 'unsynchronised', source: 'timedated (NTPSynchronized)' };
    asked = { until: options.monotonic() + (said === undefined ? every.silent : every.answered), sync };
    return sync;
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function askTimedated(): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    execFile('timedatectl', ['show', '--property=NTPSynchronized', '--value'], { timeout: 3_000 }, (err, stdout) => {
      const value = String(stdout).trim();
      resolve(err || (value !== 'yes' && value !== 'no') ? undefined : value === 'yes');
    });
  });
}
