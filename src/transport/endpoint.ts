// From an instrument's `transport` configuration to something the PortSupervisor can open again and again.
// serialport's own file, not its index: the index also loads ten stream parsers labgate never uses, which a start after
// a power cut would read before the analyzer's first ACK. The class is the one the index exports.
import { SerialPort } from 'serialport/dist/serialport.js';
import type { InstrumentConfig } from '../config/schema.js';
import { SerialTransport } from './serial.js';
import { AllowList } from './allow-list.js';
import { TcpClientEndpoint } from './tcp.js';
import { TcpServerEndpoint, type Refusal } from './tcp-server.js';
import type { Transport } from './transport.js';

/** Opens one session at a time; `close()` releases what outlives sessions (a TCP listener). */
export interface TransportEndpoint {
  /** Where it is, for logs and the status page (`/dev/serial/by-id/...`, `tcp://host:port`). */
  readonly description: string;
  open(signal?: AbortSignal): Promise<Transport>;
  close(): Promise<void>;
  /** Listening endpoints report the connections they refuse (allow-list, a session already talking). */
  onRefused?(listener: (refusal: Refusal) => void): void;
}

type SerialConfig = Extract<InstrumentConfig['transport'], { kind: 'serial' }>;
export type SerialPortOptions = ConstructorParameters<typeof SerialPort>[0];

/** Makes an unopened SerialPort; tests and the demo pass one that builds a SerialPortMock. */
export type SerialPortFactory = (options: SerialPortOptions) => SerialPort;

const realSerialPort: SerialPortFactory = (options) => new SerialPort(options);

/** A serial port by path; each `open` is a fresh SerialPort (after an unplug the old handle is dead). */
export class SerialEndpoint implements TransportEndpoint {
  constructor(
    private readonly config: SerialConfig,
    private readonly createPort: SerialPortFactory = realSerialPort,
  ) {}

  get description(): string {
    return this.config.path;
  }

  /** Rejects with the binding's error ("No such file or directory, cannot open ...") when the device is missing. */
  open(signal?: AbortSignal): Promise<Transport> {
    const { path, baudRate, dataBits, parity, stopBits, rtscts } = this.config;
    // A transport with settings left to detection is opened by detection (detect/), never as a driver's port.
    if (baudRate === 'auto' || dataBits === 'auto' || parity === 'auto') return Promise.reject(new Error(`${path}: serial settings not configured (auto)`));
    const port = this.createPort({ path, baudRate, dataBits, parity, stopBits, rtscts, autoOpen: false });
    return new Promise((resolve, reject) => {
      port.open((err) => {
        if (err) return reject(err);
        if (signal?.aborted) {
          port.close(() => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
          return;
        }
        resolve(new SerialTransport(port));
      });
    });
  }

  async close(): Promise<void> {}
}

/** Opens a serial port at one setting for listening only: what is returned has no way to write. */
export async function openListening(
  path: string,
  setting: { baudRate: number; dataBits: 7 | 8; parity: 'none' | 'even' | 'odd' },
  createPort: SerialPortFactory = realSerialPort,
  signal?: AbortSignal,
): Promise<Pick<Transport, 'onData' | 'onClose' | 'close'>> {
  const transport = await new SerialEndpoint({ kind: 'serial', path, ...setting, stopBits: 1, rtscts: false }, createPort).open(signal);
  return { onData: (l) => transport.onData(l), onClose: (l) => transport.onClose(l), close: () => transport.close() };
}

export interface EndpointDeps {
  createSerialPort?: SerialPortFactory;
}

/** The endpoint for one instrument's transport configuration. */
export function endpointFor(config: InstrumentConfig['transport'], deps: EndpointDeps = {}): TransportEndpoint {
  switch (config.kind) {
    case 'serial':
      return new SerialEndpoint(config, deps.createSerialPort);
    case 'tcp-server':
      return new TcpServerEndpoint({
        host: config.host,
        port: config.port,
        ...(config.allow ? { allow: new AllowList(config.allow) } : {}),
        idleMs: config.idleTimeoutSeconds * 1000,
      });
    case 'tcp-client':
      return new TcpClientEndpoint({ host: config.host, port: config.port });
  }
}
