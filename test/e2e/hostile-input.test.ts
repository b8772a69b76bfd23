// `labgate run` fed garbage on an instrument's TCP port: blocks that are not messages at all are refused, counted and
// sampled (one journaled a minute, across reconnections), never journaled one by one; real messages in between are
// still acknowledged and stored; the page says how rejected captures are bounded.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Hl7TcpSender } from './analyzers.js';
import { hl7Message, hl7Rig } from './hostile.js';
import { readStore } from './store-view.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Random bytes without the MLLP delimiters, so each becomes one block's payload. */
function junk(): string {
  return [...randomBytes(40)].map((b) => (b === 0x0b || b === 0x1c ? '.' : String.fromCharCode(b))).join('');
}

describe('labgate run fed garbage on an HL7 port', () => {
  it('counts and samples blocks that are not messages, and keeps acknowledging real ones', async () => {
    const { gateway, sender, httpPort, hl7Port } = await hl7Rig(cleanups, 'junk');
    expect(await sender.send(hl7Message(1))).toBe('AA');
    sender.close();
    const blocks = 10 * 150;
    for (let session = 0; session < 10; session++) {
      const garbage = new Hl7TcpSender(hl7Port);
      cleanups.push(() => garbage.close());
      await garbage.connect();
      for (let i = 0; i < 150; i++) expect(await garbage.send(junk())).toBe('AR');
      // Reconnecting at once, as an analyzer that connects once per message does: no backoff, no refusal.
      garbage.close();
    }
    const again = new Hl7TcpSender(hl7Port);
    cleanups.push(() => again.close());
    await again.connect();
    expect(await again.send(hl7Message(2))).toBe('AA');

    const view = readStore(gateway.dataDir);
    expect(view.captures.filter((c) => c.status === 'accepted')).toHaveLength(2);
    expect(
      view.captures.filter((c) => c.status === 'rejected'),
      'one sample in the first minute',
    ).toHaveLength(1);
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^labgate_discarded_messages_total\\{instrument="bs240"\\} ${blocks}$`, 'm'));
    const refusedLines = readFileSync(gateway.log, 'utf8')
      .split('\n')
      .filter((l) => l.includes('hl7 block that is not a message refused'));
    expect(refusedLines, 'logged once, the rest summarized at the end of the interval').toHaveLength(1);
    const status = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as { rejectedRetention?: unknown };
    expect(status.rejectedRetention).toEqual({ keptMb: 100, prunedSinceStart: 0 });
  });
});
