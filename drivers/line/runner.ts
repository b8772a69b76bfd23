// The thin line runner: framing.ts splits the transport's bytes into lines (as `labgate decode` does), the
// assembler decides what a report is, the IngestPort commits it. A printer never resends, so a report the
// store cannot take is held in memory (bounded) and retried in order; it is never half-stored.
import type { DriverContext, DriverRunner, IngestOutcome } from '../../src/runner-contract.js';
import { assemble, initialAssemblerState, type AssemblerInput, type AssemblerState, type Report } from './assembler.js';
import { lineInput } from './decode.js';
import { frameEnd, frameStep, initialFramingState, type FramingConfig, type FramingEvent, type FramingState } from './framing.js';
import { compileLayout, framingOf, lineOptions, type LineLayout, type LineOptions, type LineOptionsInput } from './options.js';
import { normalizeReport } from './report.js';

/** Binds the line driver to an instrument's transport and store. */
export function createLineRunner(ctx: DriverContext, options: LineOptions | LineOptionsInput): DriverRunner {
  return new LineRunner(ctx, lineOptions(options as LineOptionsInput));
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

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: LineOptions,
  ) {
    this.layout = compileLayout(options);
    this.framing = framingOf(options);
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
    if (this.pending.length > 0) this.ctx.log.error({ reports: this.pending.length }, 'line reports not committed at stop');
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    const step = frameStep(this.framed, data, this.framing);
    this.framed = step.state;
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
    if (this.pending.length >= this.options.maxPendingReports) {
      const dropped = this.pending.shift()!;
      this.ctx.log.error({ bytes: dropped.raw.length, results: dropped.results.length }, 'line report dropped: too many reports waiting for the store');
    }
    this.pending.push(report);
    this.flush();
  }

  // Oldest first, so reports reach the store in the order they were printed.
  private flush(): void {
    while (this.pending.length > 0) {
      const outcome = this.ingest(this.pending[0]!);
      if (outcome.kind === 'unavailable') {
        this.ctx.onEvent({ kind: 'commit-failed', reason: outcome.reason });
        this.ctx.log.warn({ reason: outcome.reason, waiting: this.pending.length }, 'line report not committed yet; retrying');
        if (this.running && this.retryTimer === undefined) this.retryTimer = this.ctx.clock.setTimeout(() => ((this.retryTimer = undefined), this.flush()), this.options.retryMs);
        return;
      }
      this.pending.shift();
      this.ctx.onEvent({ kind: 'message', summary: outcome.summary });
    }
  }

  private ingest(report: Report): IngestOutcome {
    if (!this.ctx.accepting()) return { kind: 'unavailable', reason: 'store not accepting' };
    const decoded = normalizeReport(report, this.ctx.profile, this.options);
    try {
      return this.ctx.ingest({ capture: { instrumentId: this.ctx.profile.id, protocol: 'line', receivedAt: this.ctx.clock.now(), raw: report.raw }, ...decoded });
    } catch (error) {
      return { kind: 'unavailable', reason: `ingest failed: ${(error as Error).message}` };
    }
  }
}
