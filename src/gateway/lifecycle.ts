// The gateway's long-lived parts as data (STYLE.md rule 11): an ordered list of start/stop pairs, started in list
// order and stopped in exactly the reverse order, so each part is stopped while everything it uses still runs. A part
// that fails to start leaves the ones before it running; stop() then stops those, and only those.
import type { Log } from '../log.js';

/** One long-lived part: what it starts and what undoes it. */
export interface Part {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** Starts parts in order and stops the started ones in reverse. */
export class Lifecycle {
  private readonly started: Part[] = [];

  constructor(private readonly log: Log) {}

  /** Starts each part after the one before it has started; throws the first start failure. */
  async start(parts: readonly Part[]): Promise<void> {
    for (const part of parts) {
      await part.start();
      this.started.push(part);
    }
  }

  /** The started parts' names, in start order. */
  names(): string[] {
    return this.started.map((p) => p.name);
  }

  /** Stops every started part, last started first; a part that fails to stop is logged and the rest still stop. */
  async stop(): Promise<void> {
    for (let part = this.started.pop(); part !== undefined; part = this.started.pop()) {
      try {
        await part.stop();
      } catch (err) {
        this.log.error({ part: part.name, err }, 'a part failed to stop; stopping the rest');
      }
    }
  }
}
