// A fake transport that is a real implementation of the interface: tests emit data, read what was
// written, and pull the plug.
import type { CloseInfo, Transport } from './transport.js';

/** In-memory Transport for tests and the pure-driver suites. */
export class FakeTransport implements Transport {
  readonly written: Buffer[] = [];
  private dataListeners: ((data: Buffer) => void)[] = [];
  private closeListeners: ((info: CloseInfo) => void)[] = [];
  private closed = false;
  private writeListeners: ((data: Buffer) => void)[] = [];
  /** How often the driver said the session was talking (protocol traffic read). */
  talks = 0;
  /** Reading stopped by the driver: emitted data waits here, as a TCP peer's would in the network, until resumed. */
  paused = false;
  readonly waiting: Buffer[] = [];

  talking(): void {
    this.talks++;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    while (!this.paused && !this.closed && this.waiting.length > 0) this.deliver(this.waiting.shift()!);
  }

  async write(data: Buffer): Promise<void> {
    if (this.closed) throw new Error('transport closed');
    this.written.push(Buffer.from(data));
    for (const l of this.writeListeners) l(Buffer.from(data));
  }

  onData(listener: (data: Buffer) => void): void {
    this.dataListeners.push(listener);
  }

  onClose(listener: (info: CloseInfo) => void): void {
    this.closeListeners.push(listener);
  }

  /** Calls `listener` with every chunk the driver writes (the far end's view). */
  onWrite(listener: (data: Buffer) => void): void {
    this.writeListeners.push(listener);
  }

  async close(): Promise<void> {
    this.disconnect('closed by labgate');
  }

  /** Delivers bytes as if the analyzer had sent them. */
  emitData(data: Buffer | string): void {
    if (this.closed) return;
    const chunk = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
    if (this.paused) this.waiting.push(chunk);
    else this.deliver(chunk);
  }

  private deliver(chunk: Buffer): void {
    for (const l of this.dataListeners) l(chunk);
  }

  /** Simulates an unplugged cable or a dropped connection. */
  disconnect(reason = 'device unplugged'): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.closeListeners) l({ reason });
  }

  /** Everything written so far, concatenated. */
  allWritten(): Buffer {
    return Buffer.concat(this.written);
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
