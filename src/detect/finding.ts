// What detection has found so far, in the technician's words, with the configuration lines that make it permanent.
import type { Recognition } from './burst.js';
import { formatOf, type DetectorState, type Observation, type Trial } from './detector.js';
import { settingLabel, type SerialSetting } from './setting.js';

/** A detecting instrument as the status page and /healthz show it. */
export interface Finding {
  state: 'searching' | 'found';
  /** `ASTM at 9600 8N1: ENQ every 10 s`, or where the search stands. */
  summary: string;
  /** The setting listened at now. */
  setting: string;
  /** Lines to put in the instrument's entry in place of its `driver` and `transport` (empty while searching). */
  yaml: string[];
  /** The same as values, for the page's form that adds the instrument (null while searching). */
  settings: FoundSettings | null;
  /** Something the technician should know about the finding (an ambiguity, a driver that must change). */
  note: string | null;
  /** One line per setting tried, newest verdict each, in trial order. */
  trials: { setting: string; outcome: Trial['outcome']; why: string; at: number }[];
}

/** What a finding says to configure: the driver, the serial setting and the driver options it needs. */
export interface FoundSettings {
  driver: Recognition['protocol'];
  baudRate: number;
  dataBits: 7 | 8;
  parity: 'none' | 'even' | 'odd';
  options: Record<string, unknown>;
}

/** Describes the detector's state for an instrument whose port is at `path`; `driver` is what the entry names now. */
export function describeFinding(s: DetectorState, path: string, candidates: number, driver: string): Finding {
  const trials = s.trials.map((t) => ({ setting: settingLabel(t.setting), outcome: t.outcome, why: t.why, at: t.at }));
  const setting = settingLabel(s.setting);
  if (s.phase !== 'found') {
    const where = s.phase === 'opening' ? `Opening at ${setting}` : `Listening at ${setting}`;
    const summary = `${where} (setting ${s.index + 1} of ${candidates}${s.cycle > 0 ? `, round ${s.cycle + 1}` : ''}); nothing recognized yet`;
    return { state: 'searching', summary, setting, yaml: [], settings: null, note: null, trials };
  }
  const latest = s.observations[s.observations.length - 1]!.recognition;
  const notes: string[] = [];
  const format = formatOf(s.setting);
  if (format === '8N1' && s.formats['7E1'])
    notes.push('7E1 reads these bytes the same way; if frames are refused for checksums later, try dataBits: 7 and parity: even');
  if (latest.protocol === 'hl7' && latest.form === 'segments')
    notes.push("labgate reads HL7 only in MLLP blocks (VT ... FS CR): set the analyzer's host interface to MLLP");
  if (latest.protocol === 'line') notes.push('a printout needs a layout (start, result, end or idleMs): see drivers/line/README.md and config/line/');
  if (driver !== 'auto' && driver !== latest.protocol) notes.push(`the entry names driver ${driver}, but the analyzer speaks ${latest.protocol}`);
  return {
    state: 'found',
    summary: `${protocolName(latest)} at ${setting}: ${what(latest, s.observations)}`,
    setting,
    yaml: yamlLines(latest, s.setting, path),
    settings: { driver: latest.protocol, ...s.setting, options: optionsOf(latest) },
    note: notes.length ? notes.join('; ') : null,
    trials,
  };
}

function protocolName(r: Recognition): string {
  if (r.protocol === 'astm') return r.form === 'link' ? 'ASTM' : 'ASTM records without the link layer';
  if (r.protocol === 'hl7') return r.form === 'mllp' ? 'HL7 over MLLP' : 'HL7 segments without MLLP';
  return r.form === 'stx-etx' ? 'A printer (STX ... ETX records)' : 'A printer (lines of text)';
}

function what(latest: Recognition, observations: readonly Observation[]): string {
  const every = interval(observations);
  if (latest.protocol === 'astm' && latest.form === 'link') {
    const signal = latest.frames > 0 ? 'frames' : latest.enq > 0 ? 'ENQ' : 'EOT';
    return every === null ? `${signal} seen once so far (the next gives its interval)` : `${signal} every ${every}`;
  }
  const n = observations.length;
  if (latest.protocol === 'line') {
    const lineEnd = latest.delimiter === '\r\n' ? 'CR LF' : latest.delimiter === '\n' ? 'LF' : 'CR';
    return `${latest.lines} line${latest.lines === 1 ? '' : 's'} in the last burst, ending ${lineEnd}${every ? `; a burst every ${every}` : ''}`;
  }
  const unit = latest.protocol === 'hl7' ? 'message' : 'burst';
  return `${n} ${unit}${n === 1 ? '' : 's'} so far${every ? `, one every ${every}` : ''}`;
}

// The median gap between bursts that made sense, as a person says it.
function interval(observations: readonly Observation[]): string | null {
  if (observations.length < 2) return null;
  const gaps = observations
    .slice(1)
    .map((o, i) => o.at - observations[i]!.at)
    .sort((a, b) => a - b);
  const ms = gaps[Math.floor(gaps.length / 2)]!;
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

// The options a recognized form needs beyond the standard (a line layout is the person's to write).
function optionsOf(r: Recognition): Record<string, unknown> {
  if (r.protocol === 'astm' && r.form === 'records') return { framing: 'none' };
  if (r.protocol === 'line' && r.form === 'stx-etx') return { framing: 'stx-etx-bcc' };
  if (r.protocol === 'line' && r.delimiter === '\r') return { delimiter: '\r' };
  return {};
}

function yamlLines(r: Recognition, s: SerialSetting, path: string): string[] {
  const lines = [
    `driver: ${r.protocol}`,
    'transport:',
    '  kind: serial',
    `  path: ${JSON.stringify(path)}`,
    `  baudRate: ${s.baudRate}`,
    `  dataBits: ${s.dataBits}`,
    `  parity: ${s.parity}`,
  ];
  if (r.protocol === 'astm' && r.form === 'records') lines.push('options:', '  framing: none');
  if (r.protocol === 'line') {
    lines.push('options:');
    if (r.form === 'stx-etx') lines.push('  framing: stx-etx-bcc');
    else if (r.delimiter === '\r') lines.push('  delimiter: "\\r"');
    lines.push('  # the layout: start, result, end or idleMs (drivers/line/README.md)');
  }
  return lines;
}
