// A virtual RS-232 line: node-serialport's mock binding on the gateway's side, the emulated analyzer on the other.
// The gateway opens the port through the ordinary SerialEndpoint (via the injected factory), so everything above
// the binding (SerialTransport, supervisor, ASTM runner) is the production code path.
import { SerialPortMock, type SerialPort } from 'serialport';
import type { SerialPortFactory } from '../transport/endpoint.js';
import type { Transport } from '../transport/transport.js';

/** The gateway side's binding (@serialport/binding-mock's MockPortBinding; its package exports no types to NodeNext). */
type MockPortBinding = NonNullable<SerialPortMock['port']>;

/** The analyzer's end of the line: what the emulator writes reaches the gateway, and the gateway's replies come back. */
export type AnalyzerEnd = Pick<Transport, 'write' | 'onData'>;

/** One virtual serial line at a device path. */
export class VirtualSerialLine {
  private binding: MockPortBinding | null = null;
  private listener: ((data: Buffer) => void) | null = null;

  constructor(readonly path: string) {
    SerialPortMock.binding.createPort(path, { echo: false, record: false });
  }

  /** The factory the Gateway opens its serial port with; every (re)open is bound to this line. */
  readonly createSerialPort: SerialPortFactory = (options) => {
    const port = new SerialPortMock(options);
    port.on('open', () => this.attach(port.port));
    return port as unknown as SerialPort;
  };

  /** A fresh analyzer end; it replaces the previous one (one analyzer per line). */
  analyzer(): AnalyzerEnd {
    let mine: ((data: Buffer) => void) | null = null;
    return {
      write: async (data) => {
        if (!this.binding?.isOpen) throw new Error(`nobody has ${this.path} open`);
        this.binding.emitData(data);
      },
      onData: (listener) => {
        mine = listener;
        this.listener = (data) => mine?.(data);
      },
    };
  }

  /** True while the gateway has the port open. */
  get open(): boolean {
    return this.binding?.isOpen ?? false;
  }

  /** Forgets the virtual device (the mock binding's ports are process-wide). */
  remove(): void {
    SerialPortMock.binding.reset();
  }

  // binding-mock records what the port writes but emits no event for it; wrapping write() on the open port's
  // binding is how the analyzer hears the gateway's ACK and NAK.
  private attach(binding: MockPortBinding | undefined): void {
    if (!binding) return;
    this.binding = binding;
    const write = binding.write.bind(binding);
    binding.write = async (buffer: Buffer) => {
      await write(buffer);
      const copy = Buffer.from(buffer);
      setImmediate(() => this.listener?.(copy));
    };
  }
}
