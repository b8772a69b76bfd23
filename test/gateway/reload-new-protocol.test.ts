// A reload that adds an HL7 instrument to a gateway started with ASTM instruments only (which loaded no HL7 module,
// driver-registry.ts) loads HL7's driver before the instrument starts, which then answers its analyzer as any other.
// Its own file: a driver once loaded stays loaded for the rest of a test file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { planReload } from '../../src/config/reload-plan.js';
import { Gateway } from '../../src/gateway/gateway.js';
import { createLogger } from '../../src/logger.js';
import { astmCodes, astmInstrument, Hl7TcpSender } from '../e2e/analyzers.js';
import { freePort } from '../e2e/harness.js';
import { until } from '../fixtures/until.js';
import { mindrayBs } from '../hl7/fixtures.js';
import { configOf, hl7Instrument } from './configs.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tcp = (port: number) => ({ kind: 'tcp-server', host: '127.0.0.1', port });
describe('a reload that adds a protocol', () => {
  it('a reload that adds an HL7 instrument to an ASTM-only gateway starts it answering', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labgate-driver-loading-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [astmPort, hl7Port] = [await freePort(), await freePort()];
    const astmOnly = configOf(dir, [{ ...astmInstrument('chem1', '/dev/null', astmCodes), transport: tcp(astmPort) }]);
    const gateway = new Gateway(astmOnly, { clock: systemClock, random: Math.random, log: createLogger({ level: 'fatal' }) });
    await gateway.start();
    cleanups.push(() => gateway.stop());
    const withHl7 = configOf(dir, [{ ...astmInstrument('chem1', '/dev/null', astmCodes), transport: tcp(astmPort) }, hl7Instrument(hl7Port)]);
    await gateway.applyReload(planReload(gateway.config, withHl7), withHl7);
    const hl7 = new Hl7TcpSender(hl7Port);
    await until(
      () =>
        hl7.connect().then(
          () => true,
          () => false,
        ),
      10_000,
      'the HL7 port listening',
    );
    cleanups.push(() => hl7.close());
    expect(await hl7.send(mindrayBs.payload)).toBe('AA');
  });
});
