// `labgate run` with two HL7 instruments on TCP: one sends message-shaped junk (an MSH, then nonsense) back to back as
// fast as it is answered, the other real messages. The broken one journals what its limit allows a minute and is
// refused (AR) beyond it, counted and logged with counts only; its rejected captures stay within their bound as they
// arrive, not at the hourly run; the healthy one has every message acknowledged and stored; the data directory stays
// small. Before the limit and the budget, every junk message was journaled and the directory grew with the junk sent.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mindrayBs } from '../hl7/fixtures.js';
import { Hl7TcpSender } from './analyzers.js';
import { freePort, GatewayChild, scratch, writeConfig } from './harness.js';
import { hl7Message } from './hostile.js';
import { readStore } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MiB = 1024 * 1024;
const JUNK_MESSAGES = 2_000;
const JUNK_BYTES = 20_000;

/** An MSH, then a segment no decoder reads, padded to 20 kB; it names a made-up patient the log must never show. */
function junk(n: number): string {
  const head = `MSH|^~\\&|BROKEN|LAB|||20260701120000||ORU^R01|J${n}|P|2.5.1\r%%%|Doe^Jane|`;
  return head + 'x'.repeat(JUNK_BYTES - head.length);
}

function hl7Instrument(id: string, port: number): object {
  return {
    id,
    driver: 'hl7',
    timezone: 'Europe/Vienna',
    transport: { kind: 'tcp-server', host: '127.0.0.1', port },
    mapping: mindrayBs.profile.mapping,
    options: mindrayBs.options,
  };
}

function dirBytes(dir: string): number {
  return readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
}

describe('labgate run with a broken analyzer sending message-shaped junk', () => {
  it('journals the junk within its limit and bound while the healthy analyzer is acknowledged throughout', { timeout: 120_000 }, async () => {
    const s = scratch('junk-flood');
    cleanups.push(s.cleanup);
    const [httpPort, junkPort, goodPort] = [await freePort(), await freePort(), await freePort()];
    const file = writeConfig({ dir: s.dir, httpPort, instruments: [hl7Instrument('broken', junkPort), hl7Instrument('bs240', goodPort)] });
    const config = JSON.parse(readFileSync(file, 'utf8')) as { gateway: object };
    Object.assign(config.gateway, { retention: { rejectedMb: 1 }, rejectedLimit: { messagesPerMinute: 600, mbPerMinute: 4 } });
    writeFileSync(file, JSON.stringify(config));
    const gateway = new GatewayChild(file, httpPort, s.dir);
    cleanups.push(() => gateway.stopIfRunning());
    await gateway.start();

    const broken = new Hl7TcpSender(junkPort);
    const healthy = new Hl7TcpSender(goodPort);
    cleanups.push(
      () => broken.close(),
      () => healthy.close(),
    );
    await broken.connect();
    await healthy.connect();
    const junkAnswers: Record<string, number> = {};
    const flooding = (async () => {
      for (let n = 0; n < JUNK_MESSAGES; n++) {
        const code = await broken.send(junk(n));
        junkAnswers[code] = (junkAnswers[code] ?? 0) + 1;
      }
    })();
    const goodAnswers: string[] = [];
    let n = 0;
    // The healthy analyzer keeps sending until the flood is over, and then some.
    let flooded = false;
    void flooding.then(() => (flooded = true));
    while (!flooded || goodAnswers.length < 20) goodAnswers.push(await healthy.send(hl7Message(++n)));
    await flooding;

    expect(new Set(goodAnswers), `${goodAnswers.length} messages`).toEqual(new Set(['AA']));
    // 4 MB a minute of 20 kB messages: about 200 journaled (AE: rejected and kept), the rest refused (AR).
    expect(junkAnswers.AE).toBeGreaterThanOrEqual(150);
    expect(junkAnswers.AE).toBeLessThanOrEqual(Math.ceil((4 * MiB) / JUNK_BYTES) + 1);
    expect(junkAnswers.AR).toBe(JUNK_MESSAGES - junkAnswers.AE!);

    const view = readStore(gateway.dataDir);
    expect(view.integrity).toBe('ok');
    expect(view.captures.filter((c) => c.status === 'accepted')).toHaveLength(goodAnswers.length);
    expect(new Set(view.results.map((r) => r.accession))).toEqual(new Set(goodAnswers.map((_, i) => `ACC${i + 1}`)));
    // The rejected captures within their 1 MB bound, pruned as they came: the hourly run has not run yet.
    expect(view.captures.filter((c) => c.status === 'rejected').length * JUNK_BYTES).toBeLessThanOrEqual(MiB);
    const log = readFileSync(gateway.log, 'utf8');
    expect(log).not.toContain('retention run finished');
    expect(log).toContain('rejected captures over their bound pruned');
    // 40 MB of junk sent. The database holds the 1 MB bound of it beside the healthy analyzer's messages; the WAL is as
    // long as the checkpoints let it grow (its backstop is 16 MiB) and is reused, never longer for more junk.
    const files = Object.fromEntries(readdirSync(gateway.dataDir).map((f) => [f, statSync(join(gateway.dataDir, f)).size]));
    const figures = `${JSON.stringify(files)}, ${goodAnswers.length} good messages`;
    expect(files['labgate.db'], figures).toBeLessThan(10 * MiB);
    expect(dirBytes(gateway.dataDir), figures).toBeLessThan(30 * MiB);

    // Counted on /metrics and the instrument's card, logged with counts and never with what the junk said.
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^labgate_over_limit_messages_total\\{instrument="broken"\\} ${junkAnswers.AR}$`, 'm'));
    expect(metrics).toMatch(/^labgate_over_limit_messages_total\{instrument="bs240"\} 0$/m);
    const status = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as { instruments: { id: string; refusedOverLimit?: number }[] };
    expect(status.instruments.find((i) => i.id === 'broken')?.refusedOverLimit).toBe(junkAnswers.AR);
    expect(status.instruments.find((i) => i.id === 'bs240')?.refusedOverLimit).toBeUndefined();
    const limited = log.split('\n').filter((l) => l.includes('only rejected messages, over the limit'));
    expect(limited.map((l) => JSON.parse(l) as object)).toEqual([expect.objectContaining({ instrument: 'broken', journaled: junkAnswers.AE })]);
    expect(log).not.toContain('Doe');
  });
});
