// What a reload changes: instruments added, removed, restarted alone, or given a new mapping from their next message;
// everything else waits for a restart and is named, never half-applied.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { describePlan, isEmptyPlan, planReload } from '../../src/config/reload-plan.js';
import type { Config } from '../../src/config/schema.js';

function config(text: string): Config {
  const r = parseConfigText(text);
  if (r.kind === 'invalid') throw new Error(JSON.stringify(r.problems));
  return r.config;
}

const base = `
gateway: {id: gw1, dataDir: /var/lib/labgate}
instruments:
  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/a}, mapping: [{code: K, loinc: 2823-3}]}
  - {id: hema1, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5100}}
  - {id: urine1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/c}}
sinks:
  lims: {baseUrl: "https://lims.example/api", auth: {kind: static, tokenFile: /run/t}}
`;

describe('planReload', () => {
  it('changes nothing for the same file, written in another key order', () => {
    const reordered = base.replace('{id: chem1, driver: astm, timezone: UTC,', '{timezone: UTC, driver: astm, id: chem1,');
    expect(isEmptyPlan(planReload(config(base), config(reordered)))).toBe(true);
  });

  it('takes the directories of new ports at once (they are read at each listing), the other gateway keys at a restart', () => {
    const watched = base.replace('dataDir: /var/lib/labgate}', 'dataDir: /var/lib/labgate, newPortDirectories: [/dev/serial/by-path]}');
    expect(isEmptyPlan(planReload(config(base), config(watched)))).toBe(true);
    const moved = watched.replace('instrumentsFile', 'x').replace('/dev/serial/by-path]}', '/dev/serial/by-path], instrumentsFile: /srv/i.yaml}');
    expect(planReload(config(base), config(moved)).needsRestart).toEqual(['gateway.instrumentsFile']);
  });

  it('adds, removes, restarts alone, and remaps from the next message', () => {
    const next = base
      .replace('path: /dev/c}}', 'path: /dev/c, baudRate: 19200}}')
      .replace('mapping: [{code: K, loinc: 2823-3}]', 'mapping: [{code: K, loinc: 2823-3}, {code: NA, loinc: 2951-2}]')
      .replace('  - {id: hema1, driver: hl7, timezone: UTC, transport: {kind: tcp-server, port: 5100}}\n', '')
      .replace('sinks:', '  - {id: chem2, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/d}}\nsinks:');
    const plan = planReload(config(base), config(next));
    expect(plan.added.map((i) => i.id)).toEqual(['chem2']);
    expect(plan.removed).toEqual(['hema1']);
    expect(plan.restarted.map((r) => [r.instrument.id, r.why])).toEqual([['urine1', ['transport']]]);
    expect(plan.remapped.map((r) => [r.instrument.id, r.changed])).toEqual([['chem1', ['mapping']]]);
    expect(plan.needsRestart).toEqual([]);
    expect(describePlan(plan)).toBe('chem2 started; hema1 stopped; urine1 restarted (transport changed); chem1: the new mapping from its next message');
  });

  it('treats disabling as removing and enabling as adding', () => {
    const disabled = base.replace('{id: urine1,', '{id: urine1, enabled: false,');
    expect(planReload(config(base), config(disabled)).removed).toEqual(['urine1']);
    expect(planReload(config(disabled), config(base)).added.map((i) => i.id)).toEqual(['urine1']);
  });

  it('names every change outside the instruments as waiting for a restart, and applies none of it', () => {
    const next = base
      .replace('dataDir: /var/lib/labgate', 'dataDir: /srv/labgate, logLevel: debug')
      .replace('https://lims.example/api', 'https://lims2.example/api')
      .concat('alerts: {backlog: 50}\n');
    const plan = planReload(config(base), config(next));
    expect(plan.needsRestart).toEqual(['gateway.dataDir', 'gateway.logLevel', 'sinks.lims', 'alerts']);
    expect(plan.added.length + plan.removed.length + plan.restarted.length + plan.remapped.length).toBe(0);
    expect(describePlan(plan)).toBe('no instrument changed; waiting for a restart: gateway.dataDir, gateway.logLevel, sinks.lims, alerts');
  });

  it('restarts an instrument whose detected settings were copied in (detection stops, the driver starts)', () => {
    const detecting = base.replace(
      '{id: urine1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/c}}',
      '{id: urine1, driver: auto, timezone: UTC, transport: {kind: serial, path: /dev/c, baudRate: auto}}',
    );
    const plan = planReload(config(detecting), config(base));
    expect(plan.restarted.map((r) => [r.instrument.id, r.why])).toEqual([['urine1', ['driver', 'transport']]]);
  });

  it('starts a first instrument in query mode, and says its queries wait for a restart (the orders client is built at start)', () => {
    const twoWay = base.replace('transport: {kind: serial, path: /dev/c}}', 'transport: {kind: serial, path: /dev/c}, options: {orders: {query: true}}}');
    const plan = planReload(config(base), config(twoWay));
    expect(plan.restarted.map((r) => [r.instrument.id, r.why])).toEqual([['urine1', ['options']]]);
    expect(plan.needsRestart).toEqual(['instruments.urine1.options.orders']);
    const second = twoWay.replace('loinc: 2823-3}]}', 'loinc: 2823-3}], options: {orders: {download: true}}}');
    expect(planReload(config(twoWay), config(second)).needsRestart, 'a second one shares the running client').toEqual([]);
  });
});
