// The soak's calendar: chores that come back at a fixed period (a sample, a sink pulled, a cable pulled, a
// reload), run one at a time in the order they fall due, and the reload's harmless change.
import { readFileSync, writeFileSync } from 'node:fs';
import { sleep, until, type GatewayChild } from '../../test/e2e/harness.js';
import type { LastReload } from '../../src/web/health.js';

/** Runs every `everyMs` from `atMs` after the start. */
export interface Chore {
  everyMs: number;
  atMs: number;
  run: () => Promise<unknown>;
}

/** Runs the chores as they fall due until `forMs` has passed. A chore's failure ends the run. */
export async function schedule(chores: readonly Chore[], forMs: number): Promise<void> {
  const began = Date.now();
  const next = chores.map((c) => c.atMs);
  for (;;) {
    const elapsed = Date.now() - began;
    if (elapsed >= forMs) return;
    const due = next.map((at, i) => ({ at, i })).filter((d) => d.at <= elapsed);
    due.sort((a, b) => a.at - b.at);
    for (const { i } of due) {
      next[i]! += chores[i]!.everyMs;
      await chores[i]!.run();
    }
    await sleep(100);
  }
}

/**
 * SIGHUP after a harmless change: every instrument's mapping gains (or loses again) a code the analyzers never send,
 * so the reload swaps sixteen mappings while they stream. Waits for /healthz to report it, and counts the outcome.
 */
export async function reloadWithMapping(gateway: GatewayChild, setup: { instruments: object[] }, counts: { applied: number; refused: number }): Promise<void> {
  const config = JSON.parse(readFileSync(gateway.configFile, 'utf8')) as { instruments: { mapping: { code: string }[] }[] };
  for (const instrument of config.instruments) {
    const without = instrument.mapping.filter((m) => m.code !== 'ALB');
    instrument.mapping = without.length < instrument.mapping.length ? without : [...without, { code: 'ALB', loinc: '1751-7', unit: 'g/L' } as { code: string }];
  }
  setup.instruments = config.instruments;
  writeFileSync(gateway.configFile, JSON.stringify(config, null, 2));
  const before = JSON.stringify((await gateway.health()).body.lastReload);
  gateway.signal('SIGHUP');
  let after: LastReload | undefined;
  await until(
    async () => {
      after = (await gateway.health()).body.lastReload;
      return after !== undefined && JSON.stringify(after) !== before;
    },
    30_000,
    'the reload to be reported on /healthz',
  );
  counts[after!.outcome]++;
}
