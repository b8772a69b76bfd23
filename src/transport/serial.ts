// The Transport over a node-serialport SerialPort (a USB-serial adapter, or a socat pseudo-terminal in tests).
// Thin on purpose: opening the port (path, baud rate, parity) is the composition root's business.
import type { SerialPort } from 'serialport';
import type { CloseInfo, Transport } from './transport.js';

/** A Transport bound to an open (or opening) SerialPort. */
export class SerialTransport implements Transport {
  private readonly closeListeners: ((info: CloseInfo) => void)[] = [];
  private closed = false;
  // serialport holds writes on a closed port until it reopens, which a dead handle never does: settle them here.
  private readonly pending = new Set<(err: Error) => void>();

  constructor(private readonly port: SerialPort) {
    port.on('close', (err: (Error & { disconnected?: boolean }) | null) =>
      this.fireClose(err?.disconnected ? { reason: 'device unplugged', error: err } : { reason: 'closed' }),
    );
    // An error on an open port (EIO when the adapter is pulled) ends the channel; the runtime reopens it.
    port.on('error', (error: Error) => this.fireClose({ reason: `serial error: ${error.message}`, error }));
  }

  write(data: Buffer): Promise<void> {
    if (this.closed || !this.port.isOpen) return Promise.reject(new Error('serial port is closed'));
    return new Promise((resolve, reject) => {
      const fail = (err: Error): void => {
        this.pending.delete(fail);
        reject(err);
      };
      this.pending.add(fail);
      this.port.write(data, (err) => {
        if (err) return fail(err);
        this.port.drain((drainErr) => {
          if (drainErr) return fail(drainErr);
          this.pending.delete(fail);
          resolve();
        });
      });
    });
  }

  onData(listener: (data: Buffer) => void): void {
    this.port.on('data', listener);
  }

  onClose(listener: (info: CloseInfo) => void): void {
    this.closeListeners.push(listener);
  }

  close(): Promise<void> {
    if (!this.port.isOpen) {
      this.fireClose({ reason: 'closed by labgate' });
      return Promise.resolve();
    }
    return new Promise((resolve) => this.port.close(() => resolve()));
  }

  private fireClose(info: CloseInfo): void {
    if (this.closed) return;
    this.closed = true;
    for (const fail of [...this.pending]) fail(new Error(`serial port closed: ${info.reason}`));
    for (const l of this.closeListeners) l(info);
  }
}
