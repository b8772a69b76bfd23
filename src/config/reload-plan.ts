// What a configuration reload changes, decided from the running configuration and the new one (both valid). Only the
// instruments are changed while the gateway runs, each on its own so the others and the sinks never pause:
//   - an instrument added (or enabled) starts; one removed (or disabled) stops as on unplug, its message in flight
//     finished first;
//   - one whose driver, transport or driver options changed restarts alone;
//   - one whose mapping or clock zone alone changed keeps its link: the next message is decoded with the new ones.
// Everything else is read once at start and needs a restart, which the reload says instead of half-applying it:
// gateway.* but newPortDirectories, which is read at each listing of new ports (the gateway id is part of every result's
// key; the data directory holds the store and its lock; the HTTP listener, log level, disk floor and retention are
// built at start), the sinks (their drains hold batches in flight
// and the store's outbox slots are fixed by the sink list), delivery and alerts; and a first instrument in query or
// download mode, whose orders client and dispatch drain are built at start only when one is there (until a restart it
// runs one-way: its results are taken, its queries not answered).
import type { Config, InstrumentConfig } from './schema.js';
import { twoWayInstruments } from './two-way-checks.js';

/** The instruments' changes, and the changed keys a restart must apply. */
export interface ReloadPlan {
  added: InstrumentConfig[];
  removed: string[];
  restarted: { instrument: InstrumentConfig; why: string[] }[];
  /** Mapping or clock zone changed (`changed` says which): applied to the next message without touching the link. */
  remapped: { instrument: InstrumentConfig; changed: string[] }[];
  /** Configuration paths whose change takes effect only after a restart (`sinks.lims`, `gateway.dataDir`). */
  needsRestart: string[];
}

// Read per message by the decoders; every other key of an instrument is bound when its port starts.
const LIVE_KEYS = new Set(['mapping', 'timezone']);
// Read at every listing of new ports (gateway/new-ports.ts); every other gateway key is read at start.
const LIVE_GATEWAY_KEYS = new Set(['newPortDirectories']);

/** Compares the running configuration with the new one. */
export function planReload(current: Config, next: Config): ReloadPlan {
  const running = new Map(current.instruments.filter((i) => i.enabled).map((i) => [i.id, i]));
  const wanted = new Map(next.instruments.filter((i) => i.enabled).map((i) => [i.id, i]));
  const plan: ReloadPlan = { added: [], removed: [], restarted: [], remapped: [], needsRestart: restartKeys(current, next) };
  for (const id of running.keys()) if (!wanted.has(id)) plan.removed.push(id);
  for (const [id, instrument] of wanted) {
    const before = running.get(id);
    if (before === undefined) {
      plan.added.push(instrument);
      continue;
    }
    const changed = changedKeys(before, instrument);
    const why = changed.filter((k) => !LIVE_KEYS.has(k));
    if (why.length > 0) plan.restarted.push({ instrument, why });
    else if (changed.length > 0) plan.remapped.push({ instrument, changed });
  }
  return plan;
}

/** True when the plan changes nothing and asks for no restart. */
export function isEmptyPlan(plan: ReloadPlan): boolean {
  return plan.added.length + plan.removed.length + plan.restarted.length + plan.remapped.length + plan.needsRestart.length === 0;
}

/** The plan in one sentence for the log and the page. */
export function describePlan(plan: ReloadPlan): string {
  const parts = [
    ...plan.added.map((i) => `${i.id} started`),
    ...plan.removed.map((id) => `${id} stopped`),
    ...plan.restarted.map((r) => `${r.instrument.id} restarted (${r.why.join(', ')} changed)`),
    ...plan.remapped.map((r) => `${r.instrument.id}: the new ${r.changed.join(' and ')} from its next message`),
  ];
  const applied = parts.length ? parts.join('; ') : 'no instrument changed';
  return plan.needsRestart.length ? `${applied}; waiting for a restart: ${plan.needsRestart.join(', ')}` : applied;
}

// The top-level keys (gateway.x, sinks.x, delivery, alerts) that differ.
function restartKeys(current: Config, next: Config): string[] {
  const keys: string[] = [];
  for (const key of union(Object.keys(current.gateway), Object.keys(next.gateway))) {
    if (!LIVE_GATEWAY_KEYS.has(key) && !same(field(current.gateway, key), field(next.gateway, key))) keys.push(`gateway.${key}`);
  }
  for (const key of union(Object.keys(current.sinks), Object.keys(next.sinks))) {
    if (!same(field(current.sinks, key), field(next.sinks, key))) keys.push(`sinks.${key}`);
  }
  if (!same(current.delivery, next.delivery)) keys.push('delivery');
  if (!same(current.alerts, next.alerts)) keys.push('alerts');
  if (twoWayInstruments(current).size === 0) keys.push(...[...twoWayInstruments(next)].map((id) => `instruments.${id}.options.orders`));
  return keys;
}

function changedKeys(a: InstrumentConfig, b: InstrumentConfig): string[] {
  return union(Object.keys(a), Object.keys(b)).filter((k) => !same(field(a, k), field(b, k)));
}

function field(o: object, key: string): unknown {
  return (o as Record<string, unknown>)[key];
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

// Structural equality of parsed configuration values (objects compared key by key, whatever their key order).
function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}
