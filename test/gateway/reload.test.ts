// The reloader over a real file: a valid file is applied through the gateway's hook and said so; an invalid or
// unreadable one changes nothing and says why; what only a restart applies is measured against the configuration the
// process started with; reloads run one at a time.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import type { ReloadPlan } from '../../src/config/reload-plan.js';
import type { Config } from '../../src/config/schema.js';
import { ConfigReloader, reloadHealth } from '../../src/gateway/reload.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const text = (extra = '', lims = 'https://lims.example/api'): string => `
gateway: {id: gw1}
instruments:
  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}}
${extra}
sinks:
  lims: {baseUrl: "${lims}", auth: {kind: static, tokenFile: /run/t}}
`;

function rig(initial: string) {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-reload-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'labgate.yaml');
  writeFileSync(file, initial);
  const parsed = parseConfigText(initial);
  if (parsed.kind !== 'ok') throw new Error('bad fixture');
  let running: Config = parsed.config;
  const applied: ReloadPlan[] = [];
  const logged: { level: string; msg: string; obj: object }[] = [];
  const log = (level: string) => (obj: object, msg?: string) => void logged.push({ level, msg: msg ?? '', obj });
  const reloader = new ConfigReloader({
    file,
    current: () => running,
    apply: async (plan, next) => {
      await new Promise((r) => setTimeout(r, 20));
      applied.push(plan);
      running = next;
    },
    now: () => 1_000,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
  });
  return { reloader, write: (t: string) => writeFileSync(file, t), applied, logged, running: () => running, file };
}

describe('ConfigReloader', () => {
  it('applies a valid file through the gateway and says what it did', async () => {
    const r = rig(text());
    r.write(text('  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}'));
    const status = await r.reloader.reload();
    expect(status).toEqual({ at: 1_000, outcome: 'applied', summary: 'chem2 started', problems: [], waitingForRestart: [] });
    expect(r.applied.map((p) => p.added.map((i) => i.id))).toEqual([['chem2']]);
    expect(r.running().instruments.map((i) => i.id)).toEqual(['chem1', 'chem2']);
    expect(r.logged).toEqual([{ level: 'info', msg: 'configuration reloaded', obj: expect.objectContaining({ summary: 'chem2 started' }) }]);
    expect(reloadHealth(status)).toEqual([]);
  });

  it.each([
    ['a YAML syntax error', text().replace('sinks:', 'sinks: [')],
    ['a schema problem', text('  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b, baudRate: 96000}}')],
    ['a driver option problem', text('  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}, options: {framing: maybe}}')],
    ['a cross-field problem', text('  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}')],
  ])('changes nothing for %s, and says why in the status, the log and /healthz', async (_name, bad) => {
    const r = rig(text());
    const before = r.running();
    r.write(bad);
    const status = await r.reloader.reload();
    expect(status.outcome).toBe('refused');
    expect(status.problems.length).toBeGreaterThan(0);
    expect(r.applied).toEqual([]);
    expect(r.running()).toBe(before);
    expect(r.logged.map((l) => [l.level, l.msg])).toEqual([['error', 'configuration reload refused']]);
    expect(reloadHealth(status)[0]).toMatch(
      /^configuration: the last reload was refused \(\d+ problems?, first .+\); the gateway runs on the configuration before it$/,
    );
  });

  it('refuses a file it cannot read', async () => {
    const r = rig(text());
    rmSync(r.file);
    const status = await r.reloader.reload();
    expect(status).toMatchObject({ outcome: 'refused', problems: [{ path: '(file)', message: expect.stringContaining('ENOENT') }] });
  });

  it('names what waits for a restart until a reload takes it back, measured from the start', async () => {
    const r = rig(text());
    r.write(text('', 'https://lims2.example/api'));
    const changed = await r.reloader.reload();
    expect(changed.waitingForRestart).toEqual(['sinks.lims']);
    expect(changed.summary).toBe('no instrument changed; waiting for a restart: sinks.lims');
    expect(reloadHealth(changed)).toEqual(['configuration: sinks.lims changed; only a restart applies that (systemctl restart labgate)']);
    r.write(text('', 'https://lims3.example/api'));
    expect((await r.reloader.reload()).waitingForRestart).toEqual(['sinks.lims']);
    r.write(text());
    expect((await r.reloader.reload()).waitingForRestart).toEqual([]);
  });

  it('runs reloads one at a time, each against the file as it is when its turn comes', async () => {
    const r = rig(text());
    r.write(text('  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/b}}'));
    const first = r.reloader.reload();
    const second = r.reloader.reload();
    await Promise.all([first, second]);
    expect(r.applied.map((p) => p.added.length)).toEqual([1, 0]);
  });
});
