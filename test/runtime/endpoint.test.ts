import { SerialPortMock, type SerialPort } from 'serialport';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointFor } from '../../src/transport/endpoint.js';
import { isMissingDevice } from '../../src/transport/supervisor.js';

const serial = {
  kind: 'serial' as const,
  path: '/dev/labgate-mock0',
  baudRate: 9600,
  dataBits: 8 as const,
  parity: 'none' as const,
  stopBits: 1 as const,
  rtscts: false,
};
const mockPort = (options: ConstructorParameters<typeof SerialPort>[0]): SerialPort => new SerialPortMock(options) as unknown as SerialPort;

afterEach(() => SerialPortMock.binding.reset());

describe('endpointFor', () => {
  it('opens a serial port through the injected factory (mock binding) and carries bytes', async () => {
    SerialPortMock.binding.createPort(serial.path, { echo: false, record: true });
    const endpoint = endpointFor(serial, { createSerialPort: mockPort });
    expect(endpoint.description).toBe(serial.path);
    const transport = await endpoint.open();
    const closed: string[] = [];
    transport.onClose((info) => closed.push(info.reason));
    await transport.write(Buffer.from('\x06'));
    await transport.close();
    expect(closed).toEqual(['closed']);
  });

  it('rejects when the port cannot be opened', async () => {
    const endpoint = endpointFor({ ...serial, path: '/dev/labgate-absent' }, { createSerialPort: mockPort });
    await expect(endpoint.open()).rejects.toThrow(/does not exist/);
  });

  it('describes TCP endpoints', () => {
    expect(endpointFor({ kind: 'tcp-client', host: '10.0.5.20', port: 4001 }).description).toBe('tcp://10.0.5.20:4001');
    expect(endpointFor({ kind: 'tcp-server', host: '0.0.0.0', port: 5100, idleTimeoutSeconds: 0 }).description).toBe('tcp-listen://0.0.0.0:5100');
  });
});

describe('isMissingDevice', () => {
  it.each([
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), true],
    [new Error('Error: No such file or directory, cannot open /dev/ttyUSB0'), true],
    [Object.assign(new Error('Permission denied, cannot open /dev/ttyUSB0'), { code: 'EACCES' }), false],
    [new Error('Error Resource temporarily unavailable Cannot lock port'), false],
  ])('%s → %s', (err, expected) => {
    expect(isMissingDevice(err)).toBe(expected);
  });
});
