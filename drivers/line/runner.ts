// The thin line runner: framing.ts splits the transport's bytes into lines (as `labgate decode` does), the
// assembler decides what a report is, the commit path commits it. A printer never resends, so a report the
// store cannot take is held in memory (bounded) and retried in order; it is never half-stored. One that cannot be
// held (the bound reached, the gateway stopping) is lost, and counted and shown as lost.
import { CommitPath, type CommitOutcome } from '../../src/commit-path.js';
import type { DriverContext, DriverRunner } from '../../src/runner-contract.js';
import { assemble, initialAssemblerState, type AssemblerInput, type AssemblerState, type Report } from './assembler.js';
import { lineInput } from './decode.js';
import { frameEnd, frameStep, initialFramingState, type FramingConfig, type FramingEvent, type FramingState } from './framing.js';
import { compileLayout, framingOf, lineOptions, type LineLayout, type LineOptions, type LineOptionsInput } from './options.js';
import { normalizeReport } from './report.js';

/** Normalizes one report; injected so a test can hand the runner a decoder that fails. */
export type LineReportDecoder = typeof normalizeReport;

/** Binds the line driver to an instrument's transport and store. */
export function createLineRunner(ctx: DriverContext, options: LineOptions | LineOptionsInput, decode: LineReportDecoder = normalizeReport): DriverRunner {
  return new LineRunner(ctx, lineOptions(options as LineOptionsInput), decode);
}

class LineRunner implements DriverRunner {
  readonly protocol = 'line';
  private readonly layout: LineLayout;
  private state: AssemblerState = initialAssemblerState;
  private timer: unknown;
  private running = false;
  private readonly framing: FramingConfig;
  private framed: FramingState = initialFramingState();
  private readonly pending: Report[] = [];
  private retryTimer: unknown;
  private readonly path: CommitPath;
  private committing = false;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: LineOptions,
    private readonly decode: LineReportDecoder,
  ) {
    this.layout = compileLayout(options);
    this.framing = framingOf(options);
    this.path = new CommitPath(ctx, 'line');
  }

  start(): void {
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
  }

  async stop(): Promise<void> {
    this.running = false;
    // An open report is complete as far as this run can tell: commit it rather than drop it.
    this.idle();
    if (this.retryTimer !== undefined) this.ctx.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.flush();
    await this.path.settled();
    if (this.pending.length === 0) return;
    this.ctx.log.error({ reports: this.pending.length }, 'line reports not committed at stop: lost');
    for (const _ of this.pending.splice(0)) this.ctx.onEvent({ kind: 'lost', reason: 'not committed when the gateway stopped' });
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const step = frameStep(this.framed, data, this.framing);
    this.framed = step.state;
    // A printed line with something visible on it is traffic; blank lines and stray bytes are not.
    if (step.events.some((e) => e.kind === 'line' && e.line.text.some((b) => b > 0x20 && b !== 0x7f))) this.ctx.transport.talking?.();
    this.onFraming(step.events);
  }

  // The analyzer fell silent: a line without its delimiter is complete as it is, then the open report is.
  private idle(): void {
    const events = frameEnd(this.framed, this.framing);
    this.framed = initialFramingState();
    this.onFraming(events);
    this.feed({ kind: 'idle' });
  }

  private onFraming(events: readonly FramingEvent[]): void {
    for (const e of events) {
      if (e.kind === 'line') this.feed(lineInput(e.line, this.options));
      else if (e.kind === 'too-long') this.ctx.onEvent({ kind: 'discarded', reason: `line longer than ${this.options.maxLineBytes} bytes` });
      else this.ctx.onEvent({ kind: 'discarded', reason: `${e.bytes} bytes outside records` });
    }
  }

  private feed(input: AssemblerInput): void {
    if (this.timer !== undefined) this.ctx.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const step = assemble(this.state, input, this.layout, { idleMs: this.options.idleMs, maxReportLines: this.options.maxReportLines });
    this.state = step.state;
    for (const e of step.effects) {
      if (e.kind === 'report') this.commit(e.report);
      else if (e.kind === 'stray') this.ctx.onEvent({ kind: 'discarded', reason: `${e.bytes}-byte line outside a report` });
      else if (this.running) this.timer = this.ctx.clock.setTimeout(() => this.idle(), e.ms);
    }
  }

  private commit(report: Report): void {
    // A printer never resends, and memory is bounded: past maxPendingReports the oldest waiting report is lost, and
    // it is counted and shown as lost (status page, /healthz, /metrics), never dropped silently.
    if (this.pending.length >= this.options.maxPendingReports) {
      const dropped = this.pending.shift()!;
      this.ctx.log.error({ bytes: dropped.raw.length, results: dropped.results.length }, 'line report dropped: too many reports waiting for the store; lost');
      this.ctx.onEvent({ kind: 'lost', reason: `more than ${this.options.maxPendingReports} reports waiting for the store` });
    }
    this.pending.push(report);
    this.flush();
  }

  // Oldest first, so reports reach the store in the order they were printed: the next one only after the outcome of
  // the one before, in a loop rather than by recursion when outcomes arrive at once.
  private flush(): void {
    let refused = false;
    while (!refused && !this.committing && this.pending.length > 0) {
      const report = this.pending[0]!;
      this.committing = true;
      let inLoop = true;
      const then = (outcome: CommitOutcome): void => {
        this.committing = false;
        if (outcome.kind === 'unavailable') return void ((refused = true), this.retryLater());
        if (this.pending[0] === report) this.pending.shift();
        if (!inLoop) this.flush();
      };
      this.path.commit(
        report.raw,
        () => this.decode(report, this.ctx.profile, this.options),
        then,
        () => ({ waiting: this.pending.length }),
      );
      inLoop = false;
    }
  }

  private retryLater(): void {
    if (this.running && this.retryTimer === undefined)
      this.retryTimer = this.ctx.clock.setTimeout(() => ((this.retryTimer = undefined), this.flush()), this.options.retryMs);
  }
}
