// Serial ports no instrument names, listened to so the page can offer them: every few seconds the directories of
// gateway.newPortDirectories (default /dev/serial/by-id, where a USB-serial adapter appears under a stable name) are
// listed; a device there that no instrument names (by its path or the device it links to) gets detection (detect/),
// which only listens and never answers, so the analyzer keeps its results until it is added. A device that goes away,
// or that the next configuration names, is let go first: a reload releases it before its instrument opens it.
import { readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { DetectingPort } from '../detect/detecting-port.js';
import type { DetectorOptions } from '../detect/detector.js';
import type { Log } from '../log.js';
import { openListening, type SerialPortFactory } from '../transport/endpoint.js';
import type { PortStatus } from '../transport/supervisor.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Part } from './lifecycle.js';

/** How often the directories are listed. */
export const SCAN_MS = 2_000;
/** Ports listened to at once at most (a directory full of devices must not open them all). */
const MAX_PORTS = 16;
/** Names looked at per directory and listing: a directory of thousands of entries costs no more than this. */
const MAX_NAMES = 64;

export interface NewPortsOptions {
  directories: () => readonly string[];
  /** The serial paths the configuration names now (every instrument, in service or not). */
  configured: () => readonly string[];
  clock: Clock;
  log: Log;
  random: () => number;
  createSerialPort?: SerialPortFactory;
  detectTiming?: Partial<Pick<DetectorOptions, 'gapMs' | 'silenceMs' | 'maxBurstBytes'>>;
  /** How often the directories are listed; default SCAN_MS. */
  scanMs?: number;
}

/** Detection on the serial ports no instrument names. */
export class NewPorts implements Part {
  readonly name = 'new-ports';
  private readonly listening = new Map<string, DetectingPort>();
  /** Released for a reload's new instrument: not listened to again while the configuration does not name them yet. */
  private readonly reserved = new Set<string>();
  private timer: unknown;
  private running = false;
  private scanning: Promise<void> = Promise.resolve();

  constructor(private readonly o: NewPortsOptions) {}

  /** The gateway's: the directories and the instruments of the configuration running now. */
  static of(config: () => Config, deps: Pick<GatewayDeps, 'clock' | 'log' | 'random' | 'createSerialPort'>): NewPorts {
    return new NewPorts({
      directories: () => config().gateway.newPortDirectories,
      configured: () => serialPaths(config()),
      clock: deps.clock,
      log: deps.log.child({ part: 'new-ports' }),
      random: deps.random,
      ...(deps.createSerialPort ? { createSerialPort: deps.createSerialPort } : {}),
    });
  }

  start(): void {
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) this.o.clock.clearTimeout(this.timer);
    await this.scanning;
    await this.release(() => true);
  }

  /** Each port's status with what detection found, in path order. */
  snapshots(): PortStatus[] {
    return [...this.listening.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, port]) => port.snapshot());
  }

  /** Lets go of the ports `paths` name (a reload's new instruments), before anything opens them. */
  async releasePaths(paths: readonly string[]): Promise<void> {
    await this.scanning;
    const named = await resolved(paths);
    for (const p of named) this.reserved.add(p);
    await this.release((path, real) => named.has(path) || named.has(real));
  }

  private schedule(ms: number): void {
    if (!this.running) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.scanning = this.scan().catch((err: unknown) => this.o.log.warn({ err }, 'listing new serial ports failed'));
      void this.scanning.then(() => this.schedule(this.o.scanMs ?? SCAN_MS));
    }, ms);
  }

  private async scan(): Promise<void> {
    const present = new Map<string, string>();
    for (const dir of this.o.directories()) {
      for (const name of (await readdir(dir).catch(() => [] as string[])).sort().slice(0, MAX_NAMES)) {
        const path = join(dir, name);
        present.set(path, await realpath(path).catch(() => path));
      }
    }
    const named = await resolved(this.o.configured());
    for (const r of this.reserved) if (named.has(r)) this.reserved.delete(r);
    for (const r of this.reserved) named.add(r);
    const wanted = [...present].filter(([path, real]) => !named.has(path) && !named.has(real));
    await this.release((path) => !wanted.some(([p]) => p === path));
    for (const [path] of wanted) {
      if (!this.running || this.listening.has(path) || this.listening.size >= MAX_PORTS) continue;
      this.listen(path);
    }
  }

  private listen(path: string): void {
    const port = new DetectingPort({
      instrument: `new port ${path}`,
      path,
      driver: 'auto',
      scope: { baudRate: 'auto', dataBits: 'auto', parity: 'auto' },
      open: (setting, signal) => openListening(path, setting, this.o.createSerialPort, signal),
      clock: this.o.clock,
      log: this.o.log,
      random: this.o.random,
      ...(this.o.detectTiming ? { timing: this.o.detectTiming } : {}),
    });
    this.listening.set(path, port);
    this.o.log.info({ endpoint: path }, 'a serial port no instrument names: listening to detect its settings');
    port.start();
  }

  private async release(which: (path: string, real: string) => boolean): Promise<void> {
    const gone: Promise<void>[] = [];
    for (const [path, port] of this.listening) {
      if (!which(path, await realpath(path).catch(() => path))) continue;
      this.listening.delete(path);
      gone.push(port.stop());
    }
    await Promise.all(gone);
  }
}

// The paths and the devices they link to.
async function resolved(paths: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const p of paths) {
    out.add(p);
    out.add(await realpath(p).catch(() => p));
  }
  return out;
}

/** The serial paths a configuration names (every instrument, in service or not). */
export function serialPaths(config: { instruments: readonly { transport: { kind: string; path?: string } }[] }): string[] {
  return config.instruments.flatMap((i) => (i.transport.kind === 'serial' && i.transport.path ? [i.transport.path] : []));
}
