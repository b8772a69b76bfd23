// The byte pipe a driver runs over: a serial port, a TCP connection, or a fake in tests.

/** Why a transport closed; `reason` is for the technician (e.g. `device unplugged`). */
export interface CloseInfo {
  reason: string;
  error?: Error;
}

/** A small duplex byte channel. Listeners are set once by the runner that owns the transport. */
export interface Transport {
  /** Queues bytes for the peer; resolves when handed to the OS (drained). */
  write(data: Buffer): Promise<void>;
  onData(listener: (data: Buffer) => void): void;
  onClose(listener: (info: CloseInfo) => void): void;
  /** Closes the channel; onClose listeners fire once. */
  close(): Promise<void>;
  /**
   * The driver read protocol traffic (a frame, ENQ or EOT, an MLLP block, a printed line): the session is talking. Bytes
   * alone are not (a NUL every few seconds would hold a listening port for ever); only a listening endpoint weighs it.
   */
  talking?(): void;
  /**
   * Stops reading until `resume()`: what the peer sends waits in the network (TCP's window fills and the peer waits), so
   * a peer faster than the commits is slowed, and nothing is dropped. Absent where reading cannot be held back: a serial
   * line has no flow control labgate can count on.
   */
  pause?(): void;
  resume?(): void;
}
