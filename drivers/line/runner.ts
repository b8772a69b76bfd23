// The thin line runner: @serialport/parser-readline splits the transport's bytes into lines, the
// assembler decides what a report is, the IngestPort commits it. A printer never resends, so a report the
// store cannot take is held in memory (bounded) and retried in order; it is never half-stored.
import { ReadlineParser } from '@serialport/parser-readline';
import type { DriverContext, DriverRunner, IngestOutcome } from '../../src/driver.js';
import { assemble, initialAssemblerState, type AssemblerInput, type AssemblerState, type Report } from './assembler.js';
import { lineText } from './decode.js';
import { compileLayout, lineOptions, type LineLayout, type LineOptions, type LineOptionsInput } from './options.js';
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
  private pendingBytes = 0;
  private parser: ReadlineParser;
  private readonly pending: Report[] = [];
  private retryTimer: unknown;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: LineOptions,
  ) {
    this.layout = compileLayout(options);
    this.parser = this.newParser();
  }

  start(): void {
    this.running = true;
    this.ctx.transport.onData((data) => this.onData(data));
  }

  async stop(): Promise<void> {
    this.running = false;
    // An open report is complete as far as this run can tell: commit it rather than drop it.
    this.feed({ kind: 'idle' });
    if (this.retryTimer !== undefined) this.ctx.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.flush();
    if (this.pending.length > 0) this.ctx.log.error({ reports: this.pending.length }, 'line reports not committed at stop');
  }

  private newParser(): ReadlineParser {
    // latin1 strings map bytes one to one, so the journaled capture is byte-exact whatever the charset.
    const parser = new ReadlineParser({ delimiter: Buffer.from(this.options.delimiter, 'latin1'), includeDelimiter: true, encoding: 'latin1' });
    parser.on('data', (line: string) => {
      this.pendingBytes = 0;
      const raw = Buffer.from(line, 'latin1');
      this.feed({ kind: 'line', raw, text: lineText(raw, this.options) });
    });
    return parser;
  }

  private onData(data: Buffer): void {
    if (!this.running) return;
    this.ctx.onEvent({ kind: 'bytes', count: data.length });
    this.pendingBytes += data.length;
    this.parser.write(data);
    if (this.pendingBytes > this.options.maxLineBytes) {
      // parser-readline buffers without bound; a line this long is noise, so the parser is replaced.
      this.ctx.onEvent({ kind: 'discarded', reason: `line longer than ${this.options.maxLineBytes} bytes` });
      this.parser.removeAllListeners('data');
      this.parser = this.newParser();
      this.pendingBytes = 0;
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
      else if (this.running) this.timer = this.ctx.clock.setTimeout(() => this.feed({ kind: 'idle' }), e.ms);
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
