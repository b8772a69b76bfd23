// New ports over a real socat pseudo-terminal with the native serialport binding: a device appearing in a watched
// directory that no instrument names is listened to (never answered) and its settings found; one the configuration
// names, or a reload is about to open, is let go; an unplugged one is dropped.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { NewPorts } from '../../src/gateway/new-ports.js';
import { silentLog } from '../../src/log.js';
import { Cable, until } from '../e2e/harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('new ports', () => {
  it(
    'listens to a device no instrument names, finds its settings without answering, and lets it go when it is named or unplugged',
    { timeout: 30_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'labgate-new-ports-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const byId = join(dir, 'by-id');
      mkdirSync(byId);
      const cable = new Cable(dir, byId, 'usb-Emulator_ASTM-if00-port0');
      let configured: string[] = [];
      const ports = new NewPorts({
        directories: () => [byId],
        configured: () => configured,
        clock: systemClock,
        log: silentLog,
        random: Math.random,
        detectTiming: { gapMs: 100, silenceMs: 2_000 },
        scanMs: 100,
      });
      ports.start();
      cleanups.push(() => ports.stop());
      await until(() => ports.snapshots().length === 0, 1_000, 'an empty directory');
      await cable.plug();
      cleanups.push(() => cable.unplug());
      await until(() => ports.snapshots()[0]?.state === 'connected', 5_000, 'the new port to be listened to');
      const analyzer = await cable.openAnalyzer(9600);
      cleanups.push(() => analyzer.close());
      const heard: Buffer[] = [];
      analyzer.onData((d) => heard.push(d));
      const enq = setInterval(() => void analyzer.write(Buffer.from([0x05])), 300);
      cleanups.push(() => clearInterval(enq));
      await until(() => ports.snapshots()[0]?.detection?.state === 'found', 10_000, 'the settings to be found');
      expect(ports.snapshots()[0]).toMatchObject({
        endpoint: cable.device,
        detection: { settings: { driver: 'astm', baudRate: 9600, dataBits: 8, parity: 'none', options: {} } },
      });
      expect(Buffer.concat(heard)).toEqual(Buffer.alloc(0));

      // A reload about to open it: released at once, and not listened to again before the configuration names it.
      await ports.releasePaths([cable.device]);
      expect(ports.snapshots()).toEqual([]);
      await new Promise((r) => setTimeout(r, 400));
      expect(ports.snapshots()).toEqual([]);
      configured = [cable.device];
      await new Promise((r) => setTimeout(r, 400));
      expect(ports.snapshots()).toEqual([]);
      // Taken out of the configuration: a new port again; unplugged: gone.
      configured = [];
      await until(() => ports.snapshots().length === 1, 5_000, 'the port to be listened to again');
      await cable.unplug();
      await until(() => ports.snapshots().length === 0, 5_000, 'the unplugged port to be dropped');
    },
  );
});
