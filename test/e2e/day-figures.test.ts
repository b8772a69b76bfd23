// The status page's per-instrument "today" after a restart: the real `labgate run` receives HL7 messages over TCP, is
// killed with SIGKILL (a power cut, as far as the process can tell) and started again on the same data directory;
// the page a technician opens then shows the same messages and results of today and the same last message time,
// read from the store, not zero and "never".
import { afterEach, expect, it } from 'vitest';
import { mindrayBs } from '../hl7/fixtures.js';
import { Hl7TcpSender } from './analyzers.js';
import { freePort, GatewayChild, scratch, writeConfig } from './harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The figures of one instrument's card on the status page, as the technician sees them. */
async function card(httpPort: number, instrument: string): Promise<{ messages: number; results: number; lastMessageAt: number | null }> {
  const page = await (await fetch(`http://127.0.0.1:${httpPort}/`)).text();
  const start = page.indexOf(`id="instrument-${instrument}"`);
  expect(start, `the page shows ${instrument}`).toBeGreaterThan(0);
  const article = page.slice(start, page.indexOf('</article>', start));
  const fact = (label: string): string => new RegExp(`<dt>${label}</dt><dd>(.*?)</dd>`, 's').exec(article)?.[1] ?? '';
  const last = /data-at="(\d+)"/.exec(fact('Last message'));
  return { messages: Number(fact('Messages today')), results: Number(fact('Results today')), lastMessageAt: last ? Number(last[1]) : null };
}

it('after SIGKILL and a restart, the page shows the same messages and results of today and the same last message', { timeout: 60_000 }, async () => {
  const s = scratch('day-figures');
  cleanups.push(s.cleanup);
  const [httpPort, hl7Port] = [await freePort(), await freePort()];
  const instrument = {
    id: 'bs240',
    driver: 'hl7',
    timezone: 'Europe/Vienna',
    transport: { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port },
    mapping: mindrayBs.profile.mapping,
    options: mindrayBs.options,
  };
  const gateway = new GatewayChild(writeConfig({ dir: s.dir, httpPort, instruments: [instrument] }), httpPort, s.dir);
  cleanups.push(() => gateway.stopIfRunning());
  await gateway.start();
  const hl7 = new Hl7TcpSender(hl7Port);
  cleanups.push(() => hl7.close());
  await hl7.connect();
  const hl7Message = (accession: string, controlId: number): string =>
    mindrayBs.payload.replace('|12|P|', `|${controlId}|P|`).replaceAll('2410290017', accession);

  // Four messages of three results each, then the first one again (a resend: a message, no new result).
  for (let n = 0; n < 4; n++) expect(await hl7.send(hl7Message(`S-${n}`, n + 1))).toBe('AA');
  const sentAt = Date.now();
  expect(await hl7.send(hl7Message('S-0', 1))).toBe('AA');
  const before = await card(httpPort, 'bs240');
  expect(before).toMatchObject({ messages: 5, results: 12 });
  expect(before.lastMessageAt).toBeGreaterThanOrEqual(sentAt - 1_000);
  expect(before.lastMessageAt).toBeLessThanOrEqual(Date.now());

  await gateway.kill('SIGKILL');
  hl7.close();
  await gateway.start();
  // Before the kill the port's own time (on the monotonic clock, so a step of the wall clock cannot move it), after it
  // the store's: both are the message's receive time, read off two clocks a fraction of a millisecond apart.
  const after = await card(httpPort, 'bs240');
  expect({ ...after, lastMessageAt: 0 }).toEqual({ ...before, lastMessageAt: 0 });
  expect(Math.abs(after.lastMessageAt! - before.lastMessageAt!)).toBeLessThanOrEqual(1);
});
