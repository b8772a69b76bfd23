// The thin runner of detection: opens the port at the setting the detector asks for, feeds it the bytes, the time and
// the port's ups and downs, and never writes. It holds the port only as a ListeningLine, a type without `write`, so
// no ACK or NAK can reach an analyzer that is still being detected (it keeps its results and repeats its ENQ).
import { wallTimeOf, type Clock } from '../clock.js';
import type { Log } from '../log.js';
import { isMissingDevice, reopenDelay, defaultReopenPolicy, type PortStatus } from '../transport/supervisor.js';
import type { CloseInfo, Transport } from '../transport/transport.js';
import {
  defaultDetectorTiming,
  startDetector,
  stepDetector,
  type DetectorEffect,
  type DetectorInput,
  type DetectorOptions,
  type DetectorState,
} from './detector.js';
import { describeFinding, type Finding } from './finding.js';
import { candidateSettings, settingLabel, type DetectionScope, type SerialSetting } from './setting.js';

/** The read-only side of a port. */
export type ListeningLine = Pick<Transport, 'onData' | 'onClose' | 'close'>;

export interface DetectingPortOptions {
  instrument: string;
  path: string;
  /** The driver the entry names (`auto`, or a protocol the page compares with what is found). */
  driver: string;
  scope: DetectionScope;
  /** Opens the port at a setting; rejects when the device is missing or fails. */
  open: (setting: SerialSetting, signal: AbortSignal) => Promise<ListeningLine>;
  clock: Clock;
  log: Log;
  random?: () => number;
  timing?: Partial<Pick<DetectorOptions, 'gapMs' | 'silenceMs' | 'maxBurstBytes'>>;
  onStatus?: (status: PortStatus) => void;
}

/** Listens on one instrument's port until its settings are configured; `start()` returns at once. */
export class DetectingPort {
  private readonly options: DetectorOptions;
  private state: DetectorState;
  private status: PortStatus;
  private running = false;
  private line: ListeningLine | undefined;
  private abort: AbortController | undefined;
  private generation = 0;
  private attempt = 0;
  private wakeTimer: unknown;
  private reopenTimer: unknown;
  private lastSummary = '';

  constructor(private readonly o: DetectingPortOptions) {
    this.options = { candidates: candidateSettings(o.scope), scope: o.scope, ...defaultDetectorTiming, ...o.timing };
    this.state = startDetector(this.options).state;
    this.status = {
      instrument: o.instrument,
      endpoint: o.path,
      state: 'stopped',
      since: o.clock.monotonic(),
      reconnects: 0,
      failedOpens: 0,
      counters: { messages: 0, inserted: 0, rejected: 0, naks: 0, checksumErrors: 0, discarded: 0 },
    };
  }

  /** What has been found so far. */
  finding(): Finding {
    return describeFinding(this.state, this.o.path, this.options.candidates.length, this.o.driver);
  }

  /** The port's status with the finding, for /healthz, /metrics and the page; its times on the wall clock. */
  snapshot(): PortStatus {
    // Kept on the monotonic clock (the detector measures gaps between bytes with it), shown on the wall clock.
    const wall = (at: number): number => wallTimeOf(this.o.clock, at);
    const finding = this.finding();
    const detection = { ...finding, trials: finding.trials.map((t) => ({ ...t, at: wall(t.at) })) };
    const copy: PortStatus = { ...this.status, since: wall(this.status.since), counters: { ...this.status.counters }, detection };
    if (this.status.lastByteAt !== undefined) copy.lastByteAt = wall(this.status.lastByteAt);
    return copy;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const first = startDetector(this.options);
    this.state = first.state;
    this.perform(first.effects);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.generation++;
    this.abort?.abort();
    this.clear();
    const line = this.line;
    this.line = undefined;
    await line?.close().catch(() => undefined);
    this.set({ state: 'stopped', reason: 'gateway stopping' });
  }

  private feed(input: DetectorInput): void {
    if (!this.running) return;
    const step = stepDetector(this.state, input, this.options);
    this.state = step.state;
    this.perform(step.effects);
    const { summary, state } = this.finding();
    if (state === 'found' && summary !== this.lastSummary) this.o.log.info({ endpoint: this.o.path, finding: summary }, 'serial settings detected');
    this.lastSummary = state === 'found' ? summary : '';
  }

  private perform(effects: readonly DetectorEffect[]): void {
    for (const effect of effects) {
      if (effect.kind === 'open') {
        this.attempt = 0;
        void this.openAt(effect.setting);
      } else {
        if (this.wakeTimer !== undefined) this.o.clock.clearTimeout(this.wakeTimer);
        this.wakeTimer = this.o.clock.setTimeout(
          () => {
            this.wakeTimer = undefined;
            this.feed({ kind: 'timer', at: this.o.clock.monotonic() });
          },
          Math.max(0, effect.at - this.o.clock.monotonic()),
        );
      }
    }
  }

  private async openAt(setting: SerialSetting): Promise<void> {
    const generation = ++this.generation;
    this.clear();
    this.abort?.abort();
    const previous = this.line;
    this.line = undefined;
    await previous?.close().catch(() => undefined);
    const abort = new AbortController();
    this.abort = abort;
    let line: ListeningLine;
    try {
      line = await this.o.open(setting, abort.signal);
    } catch (err) {
      if (generation !== this.generation || !this.running) return;
      const missing = isMissingDevice(err);
      this.status.failedOpens += 1;
      this.set({ state: missing ? 'waiting-for-device' : 'error', reason: `${missing ? 'device not available: ' : ''}${(err as Error).message}` });
      return this.retry(setting, generation);
    }
    if (generation !== this.generation || !this.running) {
      await line.close().catch(() => undefined);
      return;
    }
    this.line = line;
    line.onData((data) => {
      if (generation !== this.generation) return;
      this.status.lastByteAt = this.o.clock.monotonic();
      this.feed({ kind: 'bytes', data, at: this.status.lastByteAt });
    });
    line.onClose((info: CloseInfo) => {
      if (generation !== this.generation || !this.running) return;
      this.line = undefined;
      this.set({ state: 'waiting-for-device', reason: info.reason });
      this.retry(setting, generation);
    });
    this.set({ state: 'connected', reason: `detecting: listening at ${settingLabel(setting)}, never answering` });
    this.o.log.debug({ endpoint: this.o.path, setting: settingLabel(setting) }, 'listening');
    this.feed({ kind: 'opened', at: this.o.clock.monotonic() });
  }

  // A missing or unplugged device: the same setting again, with the supervisor's bounded backoff.
  private retry(setting: SerialSetting, generation: number): void {
    const delay = reopenDelay(this.attempt++, defaultReopenPolicy, this.o.random ?? (() => 0.5));
    this.reopenTimer = this.o.clock.setTimeout(() => {
      this.reopenTimer = undefined;
      if (generation === this.generation && this.running) void this.openAt(setting);
    }, delay);
  }

  private clear(): void {
    for (const t of [this.wakeTimer, this.reopenTimer]) if (t !== undefined) this.o.clock.clearTimeout(t);
    this.wakeTimer = undefined;
    this.reopenTimer = undefined;
  }

  private set(change: Partial<PortStatus>): void {
    if (change.state !== undefined && change.state !== this.status.state) this.status.since = this.o.clock.monotonic();
    this.status = { ...this.status, ...change };
    if (this.status.reason === undefined) delete this.status.reason;
    this.o.onStatus?.(this.snapshot());
  }
}
