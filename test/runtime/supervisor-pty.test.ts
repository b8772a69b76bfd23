// The supervisor over a real pseudo-terminal pair made by socat and the real native serialport binding:
// the "cable" is pulled (socat killed, its links vanish) and plugged back (socat restarted).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { silentLog, type Log } from '../../src/log.js';
import { SerialEndpoint } from '../../src/transport/endpoint.js';
import { PortSupervisor } from '../../src/transport/supervisor.js';
import type { Transport } from '../../src/transport/transport.js';

const quiet: Log = silentLog;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** socat links two ptys: `device` is what labgate opens, `analyzer` is the far end of the cable. */
async function startSocat(dir: string): Promise<ChildProcess> {
  const child = spawn('socat', [`pty,raw,echo=0,link=${join(dir, 'device')}`, `pty,raw,echo=0,link=${join(dir, 'analyzer')}`], { stdio: 'ignore' });
  await until(() => existsSync(join(dir, 'device')) && existsSync(join(dir, 'analyzer')));
  return child;
}

/** Non-blocking read of one byte: the test never hangs on a silent line. */
function tryRead(fd: number, into: Buffer): boolean {
  try {
    return readSync(fd, into, 0, 1, null) === 1;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false;
    throw err;
  }
}

async function stopSocat(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

describe('PortSupervisor over a socat pseudo-terminal', () => {
  it('waits for the missing device, connects, survives an unplug and reconnects on replug', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-pty-'));
    const received: string[] = [];
    const sessions: Transport[] = [];
    const endpoint = new SerialEndpoint({ kind: 'serial', path: join(dir, 'device'), baudRate: 9600, dataBits: 8, parity: 'none', stopBits: 1, rtscts: false });
    const supervisor = new PortSupervisor({
      instrument: 'chem1',
      endpoint: endpoint.description,
      open: (signal) => endpoint.open(signal),
      attach: (t) => {
        sessions.push(t);
        t.onData((d) => {
          received.push(d.toString('latin1'));
          void t.write(Buffer.from('\x06'));
        });
        return { stop: async () => {} };
      },
      clock: systemClock,
      log: quiet,
      policy: { baseMs: 50, capMs: 300, stableMs: 60_000 },
    });
    cleanups.push(() => supervisor.stop());

    // Missing at start.
    supervisor.start();
    await until(() => supervisor.snapshot().failedOpens >= 2);
    expect(supervisor.snapshot().state).toBe('waiting-for-device');
    expect(supervisor.snapshot().reason).toMatch(/device not available/);

    // Plugged in.
    let socat = await startSocat(dir);
    cleanups.push(() => stopSocat(socat));
    await until(() => supervisor.snapshot().state === 'connected');
    let analyzer = openSync(join(dir, 'analyzer'), constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    writeSync(analyzer, '\x05');
    await until(() => received.join('') === '\x05');
    const ack = Buffer.alloc(1);
    await until(() => tryRead(analyzer, ack));
    expect(ack.toString('latin1')).toBe('\x06');
    expect(supervisor.snapshot().lastByteAt).toBeGreaterThan(0);
    closeSync(analyzer);

    // Unplugged: socat goes away and its links with it.
    await stopSocat(socat);
    await until(() => supervisor.snapshot().state === 'waiting-for-device');
    const failedBefore = supervisor.snapshot().failedOpens;
    await until(() => supervisor.snapshot().failedOpens >= failedBefore + 2);

    // Plugged back.
    socat = await startSocat(dir);
    await until(() => supervisor.snapshot().state === 'connected');
    expect(supervisor.snapshot().reconnects).toBe(1);
    expect(sessions).toHaveLength(2);
    analyzer = openSync(join(dir, 'analyzer'), constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    writeSync(analyzer, 'after replug');
    await until(() => received.join('') === '\x05after replug');
    closeSync(analyzer);
  });
});
