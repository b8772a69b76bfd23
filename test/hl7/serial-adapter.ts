// A small Transport over a real SerialPort, for the pseudo-terminal end-to-end test only (no
// src/transport/serial.ts existed when this was written; replace it with that when it lands).
import { SerialPort } from 'serialport';
import type { CloseInfo, Transport } from '../../src/transport/transport.js';

/** Opens `path` and resolves once the port is open. */
export async function openSerialTransport(path: string, baudRate = 115_200): Promise<Transport & { port: SerialPort }> {
  const port = new SerialPort({ path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  const closeListeners: ((info: CloseInfo) => void)[] = [];
  port.on('close', () => closeListeners.forEach((l) => l({ reason: 'port closed' })));
  return {
    port,
    write: (data) => new Promise((resolve, reject) => port.write(data, (err) => (err ? reject(err) : port.drain((e) => (e ? reject(e) : resolve()))))),
    onData: (listener) => port.on('data', listener),
    onClose: (listener) => closeListeners.push(listener),
    close: () => new Promise((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  };
}
