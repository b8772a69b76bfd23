// The configuration pages' only view of the gateway, as the status page has StatusSource: the configuration as it is
// (both files, which instruments the page may change), a check of a proposed instruments file exactly as check-config
// and the reload make it, and the one way to change it (save, reload, audit). Tests drive the pages with a source of
// their own; the composition root adapts the running gateway (gateway/config-source.ts).
import type { InstrumentConfig } from '../../config/schema.js';
import type { ConfigProblem } from '../../config/problem.js';
import type { PastVersion } from '../../config/config-versions.js';
import type { MaybePromise } from '../status/source.js';

/** One configured instrument as the configuration pages show it. */
export interface InstrumentEntry {
  config: InstrumentConfig;
  /** True when it is in the page's instruments file; false: in the main file, IT's (shown, never changed here). */
  managed: boolean;
  /** Its link now (`connected`, `waiting-for-device`, ...), or null when it does not run (out of service). */
  link: string | null;
}

/** Detection on a serial port no instrument names: what it heard, and the settings found. */
export interface NewPortView {
  path: string;
  state: 'searching' | 'found';
  summary: string;
  note: string | null;
  found: { driver: string; baudRate: number; dataBits: number; parity: string; options: Record<string, unknown> } | null;
}

/** One configuration change as the audit log has it. */
export interface ChangeView {
  at: number;
  actor: string;
  action: string;
  summary: string;
  diff: string | null;
  /** The instruments file's version it made. */
  version: string | null;
}

/** An analyzer code an instrument has sent (for the mapping form). */
export interface SeenCode {
  code: string;
  seen: number;
  lastValue: string | null;
  lastUnit: string | null;
}

/** The configuration as the pages show it, read at one instant. */
export interface ConfigState {
  mainFile: string;
  instrumentsFile: string;
  /** The instruments file's text now (null: none yet) and its version, which every form carries. */
  text: string | null;
  version: string;
  /** What is wrong with the files on disk now (a hand edit not valid, a main file with a mistake); empty when valid. */
  problems: ConfigProblem[];
  instruments: InstrumentEntry[];
  /** The gateway's own zone, preselected for a new instrument. */
  gatewayZone: string;
  history: PastVersion[];
  /** The newest changes first. */
  changes: ChangeView[];
  newPorts: NewPortView[];
}

/** A proposed instruments file checked whole: every problem, and what the reload would do. */
export interface CheckOutcome {
  problems: ConfigProblem[];
  /** `chem2 started; chem1: the new mapping from its next message`, when valid. */
  plan: string | null;
}

/** What applying a change did. */
export type ApplyOutcome =
  | { kind: 'applied'; version: string; summary: string }
  | { kind: 'changed'; version: string; latest: ChangeView | null }
  | { kind: 'invalid'; problems: ConfigProblem[] };

/** What an applied change is audited as. */
export interface ChangeRecord {
  action: 'config-change' | 'config-restore';
  /** The instrument it is about, if one. */
  subject: string | null;
  summary: string;
}

/** Rejected messages of an instrument, and how many results they give when decoded with its configuration now. */
export interface Reprocessable {
  captures: number;
  results: number;
}

/** The configuration pages' port to the gateway. */
export interface ConfigSource {
  state(): Promise<ConfigState>;
  /** The codes an instrument has sent, most seen first. */
  codesOf(id: string): MaybePromise<SeenCode[]>;
  /** Checks a proposed instruments file with the main file, as check-config does, and plans its reload. */
  check(text: string): MaybePromise<CheckOutcome>;
  /** Saves `text` if the file is still at `base`, reloads, audits with `actor`; checks it again first. */
  apply(text: string, base: string, actor: string, record: ChangeRecord): Promise<ApplyOutcome>;
  /** A previous version's text, or null when it is not kept. */
  past(version: string): Promise<string | null>;
  /** What reprocessing an instrument's rejected messages would give now. */
  reprocessable(id: string): MaybePromise<Reprocessable>;
  /** Reprocesses them, audited with `actor`. */
  reprocess(id: string, actor: string): MaybePromise<Reprocessable & { stillRejected: number }>;
}
