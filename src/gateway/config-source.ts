// The configuration pages' source over the running gateway: the files as readConfiguration reads them (the one function
// check-config, start and reload use), the instruments file's durable saves (config-versions.ts), the gateway's reload
// (only what changed restarts), the store's audit log and rejected captures. A change is audited once it is saved,
// before the reload, so a saved change always has its entry: who, when, the diff and what the reload was to do.
import { ConfigVersions } from '../config/config-versions.js';
import { fileChecks } from '../config/file-checks.js';
import { relabelProblems } from '../config/instruments-file.js';
import { diffText, lineDiff } from '../config/line-diff.js';
import { MAX_CONFIG_BYTES } from '../config/config-file.js';
import { readConfiguration, readConfigurationAsync, type ConfigLayout, type ConfigResult } from '../config/load.js';
import type { ConfigProblem } from '../config/problem.js';
import { describePlan, planReload } from '../config/reload-plan.js';
import type { Config } from '../config/schema.js';
import { bindInstruments, type BoundInstrument } from '../driver-registry.js';
import type { Log } from '../log.js';
import type { ConfigurationChange } from '../store/configuration-changes.js';
import type { Store } from '../store/store.js';
import type { PortStatus } from '../transport/supervisor.js';
import type { ApplyOutcome, ChangeView, CheckOutcome, ConfigSource, ConfigState, NewPortView } from '../web/config/source.js';
import type { ReloadStatus } from './reload.js';
import { reprocessCapture } from './reprocess.js';

/** What the source reads and calls, injected by the gateway. */
export interface ConfigSourceParts {
  /** The main configuration file the gateway was started with. */
  file: string;
  running: () => Config;
  bound: () => ReadonlyMap<string, BoundInstrument>;
  instruments: () => PortStatus[];
  newPorts: () => NewPortView[];
  store: Store;
  reload: () => Promise<ReloadStatus>;
  /** Wakes the drains after reprocessed results were stored. */
  delivered: () => void;
  /** This machine's time zone (labgate run asks ICU for it only when a page needs it). */
  gatewayZone: () => string;
  now: () => number;
  log: Log;
  /** Runs between the fsync of a save and its rename (the crash test stops the process there). */
  beforeRename?: () => void;
}

/** Rejected captures looked at per reprocessing (the oldest first), so one click is bounded work. */
const REPROCESS_LIMIT = 200;
/** Diff text kept in an audit entry at most. */
const AUDIT_DIFF_CHARS = 20_000;

/** The configuration pages' view of this gateway. */
export function gatewayConfigSource(parts: ConfigSourceParts): ConfigSource {
  const saves = new Map<string, ConfigVersions>();
  const versionsOf = (file: string): ConfigVersions => {
    let v = saves.get(file);
    if (!v) saves.set(file, (v = new ConfigVersions({ file, now: parts.now, ...(parts.beforeRename ? { beforeRename: parts.beforeRename } : {}) })));
    return v;
  };
  const judge = ({
    result,
    layout,
  }: {
    result: ConfigResult;
    layout: ConfigLayout | null;
  }): { outcome: CheckOutcome; layout: ConfigLayout | null; config: Config | null } => {
    if (result.kind === 'invalid') return { outcome: { problems: result.problems, plan: null }, layout, config: null };
    const bound = bindInstruments(result.config);
    if (bound.kind === 'invalid') return { outcome: { problems: relabel(bound.problems, layout), plan: null }, layout, config: null };
    // What check-config checks of the files the configuration names (a secret file gone is a problem there too).
    const files = fileChecks(result.config, parts.file).problems;
    if (files.length) return { outcome: { problems: relabel(files, layout), plan: null }, layout, config: null };
    return { outcome: { problems: [], plan: describePlan(planReload(parts.running(), result.config)) }, layout, config: result.config };
  };
  // A proposed file is checked as the next start would read it: within the configuration files' size limit too.
  const check = (text: string): ReturnType<typeof judge> => {
    const checked = judge(readConfiguration(parts.file, { instrumentsText: text }));
    if (Buffer.byteLength(text) <= MAX_CONFIG_BYTES) return checked;
    const problem = {
      path: `${checked.layout?.instrumentsFile ?? 'instruments file'}:(file)`,
      message: `the file would be over the ${MAX_CONFIG_BYTES}-byte limit of a configuration file`,
    };
    return { ...checked, outcome: { problems: [problem, ...checked.outcome.problems], plan: null } };
  };
  const changes = (limit: number): ChangeView[] => parts.store.configChanges.list(limit).map(changeView);
  const captures = (id: string) =>
    parts.store
      .rejectedCaptures(REPROCESS_LIMIT * 5)
      .filter((c) => c.instrumentId === id)
      .slice(0, REPROCESS_LIMIT);
  return {
    state: async () => {
      const { outcome, layout, config } = judge(await readConfigurationAsync(parts.file));
      const file = layout?.instrumentsFile ?? '';
      const versions = versionsOf(file);
      const current = await versions.current();
      const shown = config ?? parts.running();
      const links = new Map(parts.instruments().map((p) => [p.instrument, p.state]));
      const mainCount = config && layout ? layout.mainCount : shown.instruments.length;
      return {
        mainFile: parts.file,
        instrumentsFile: file,
        text: current.text,
        version: current.version,
        problems: outcome.problems,
        instruments: shown.instruments.map((c, i) => ({ config: c, managed: i >= mainCount, link: links.get(c.id) ?? null })),
        gatewayZone: parts.gatewayZone(),
        history: await versions.history(),
        changes: changes(20),
        newPorts: parts.newPorts(),
      } satisfies ConfigState;
    },
    codesOf: (id) =>
      parts.store
        .codesSeen(id)
        .sort((a, b) => b.seen - a.seen || a.code.localeCompare(b.code))
        .map(({ code, seen, lastValue, lastUnit }) => ({ code, seen, lastValue, lastUnit })),
    check: (text) => check(text).outcome,
    apply: async (text, base, actor, record): Promise<ApplyOutcome> => {
      const { outcome, layout } = check(text);
      if (outcome.problems.length || !layout) return { kind: 'invalid', problems: outcome.problems };
      const versions = versionsOf(layout.instrumentsFile);
      const saved = await versions.save(text, base);
      if (saved.kind === 'changed') return { kind: 'changed', version: saved.version, latest: changes(1)[0] ?? null };
      const diff = diffText(lineDiff((await versions.past(base)) ?? '', text)).slice(0, AUDIT_DIFF_CHARS);
      const detail = { summary: record.summary, diff, file: layout.instrumentsFile, from: base, to: saved.version, plan: outcome.plan };
      parts.store.audit({ actor, action: record.action, subject: record.subject, detail });
      const status = await parts.reload();
      if (status.outcome === 'refused') parts.log.error({ problems: status.problems }, 'a saved configuration change was not applied by the reload');
      const summary = status.outcome === 'applied' ? status.summary : `saved, but the reload refused the configuration: ${status.summary}`;
      return { kind: 'applied', version: saved.version, summary };
    },
    past: async (version) => {
      const { layout } = await readConfigurationAsync(parts.file);
      return layout ? versionsOf(layout.instrumentsFile).past(version) : null;
    },
    reprocessable: (id) => {
      const instrument = parts.bound().get(id);
      const list = captures(id);
      let results = 0;
      for (const c of list) {
        const raw = parts.store.captureRaw(c.id);
        if (instrument && raw && instrument.driver.protocol === c.protocol) {
          results += instrument.driver.decodeCapture(raw, instrument.profile).reduce((n, m) => n + m.results.length, 0);
        }
      }
      return { captures: list.length, results };
    },
    reprocess: (id, actor) => {
      const totals = { captures: 0, results: 0, stillRejected: 0 };
      for (const c of captures(id)) {
        const summary = reprocessCapture(parts.store, parts.bound(), c.id, actor);
        totals.captures++;
        totals.results += summary.inserted + summary.absorbed;
        if (summary.rejected > 0) totals.stillRejected++;
      }
      if (totals.results > 0) parts.delivered();
      return totals;
    },
  };
}

function relabel(problems: ConfigProblem[], layout: ConfigLayout | null): ConfigProblem[] {
  return layout ? relabelProblems(problems, layout.mainCount, layout.instrumentsFile) : problems;
}

function changeView(c: ConfigurationChange): ChangeView {
  const text = (key: string): string | null => (typeof c.detail?.[key] === 'string' ? (c.detail[key] as string) : null);
  return { at: c.at, actor: c.actor, action: c.action, summary: text('summary') ?? c.action, diff: text('diff'), version: text('to') };
}
