// SerialTransport over a real socat pseudo-terminal with the native binding: once the cable is pulled, a write
// must fail at once, never hang (a hung write would keep a runner's stop() and so the port's reopen waiting).
import { afterEach, describe, expect, it } from 'vitest';
import { Cable, scratch, until } from '../e2e/harness.js';

describe('SerialTransport after the cable is pulled', () => {
  let cleanup = (): void => {};
  afterEach(() => cleanup());

  it('rejects writes once the port has closed', async () => {
    const dir = scratch('labgate-serial-');
    cleanup = dir.cleanup;
    const cable = new Cable(dir.dir);
    await cable.plug();
    const transport = await cable.openAnalyzer();
    let closed = false;
    transport.onClose(() => (closed = true));
    await transport.write(Buffer.from('\x05'));
    await cable.unplug();
    await transport.close();
    await until(() => closed, 5_000, 'close event');
    const outcome = await Promise.race([
      transport.write(Buffer.from('\x06')).then(
        () => 'resolved',
        () => 'rejected',
      ),
      new Promise((resolve) => setTimeout(() => resolve('hung'), 2_000)),
    ]);
    expect(outcome).toBe('rejected');
  });
});
