// LIS2-A2 result records → keyed results, per the instrument's mapping and options. Every result either
// becomes a KeyedResult or a Rejection with a reason (invariant 2); patient demographics never enter either.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import { lookupAnalyte } from '../../src/config/mapping.js';
import type { DecodedMessage, Rejection } from '../../src/message.js';
import type { KeyedResult } from '../../src/result.js';
import { keyedResultSchema } from '../../src/result.js';
import { valueFields } from '../../src/result-value.js';
import type { AstmOptions } from './options.js';
import { astmGrammar, formatFieldLocation } from '../../src/field-location.js';
import type { ParsedMessage, ResultEntry } from './records.js';
import { component, components, fieldText, holdsComponents, repeats, textAt } from './records.js';
import type { ResultTime } from './result-time.js';
import { recordFor, resultTime } from './result-time.js';
import { readAstmStatus } from './status.js';
import { readQuery } from './query.js';
import { codeFromComponents, type CodeOptions } from './test-code.js';

/** Normalizes every result of the parsed messages of one capture. */
export function normalizeMessages(messages: readonly ParsedMessage[], profile: InstrumentProfile, options: AstmOptions): DecodedMessage {
  const out: DecodedMessage = { results: [], rejections: [] };
  const memo = new Map<string, ResultTime>();
  for (const m of messages) {
    if (m.invalid !== undefined) {
      out.rejections.push({ reason: `message not read: ${m.invalid}` });
      continue;
    }
    if (!m.header) out.rejections.push({ reason: 'records before any H header record were not read' });
    if (m.strayLines > 0) out.rejections.push({ reason: `${m.strayLines} line(s) not read: not a record (a type letter and the field delimiter)` });
    if (m.queries.length > 0) (out.queries ??= []).push(...m.queries.map((q) => readQuery(q, options)));
    if (m.queries.length > 0 && !options.orders.query) {
      out.rejections.push({
        reason: `${m.queries.length} host query (Q) record(s) not answered: query mode is off for this instrument (options.orders.query)`,
      });
    }
    // An analyzer allowed to end its messages at EOT (deviations.completeAtEot) sends no L record.
    if (m.header && !m.terminated && !options.deviations.completeAtEot) out.rejections.push({ reason: 'message has no L terminator record (incomplete)' });
    for (const entry of m.results) {
      const r = normalizeResult(entry, profile, options, memo);
      if (r === null) continue;
      if ('reason' in r) out.rejections.push(r);
      else out.results.push(r);
    }
  }
  return out;
}

/** The analyzer's code from the configured R.3 components (test-code.ts). */
export function analyzerCode(entry: ResultEntry, options: CodeOptions): string {
  return codeFromComponents(components(entry.result, 3), options);
}

/** One R record → a keyed result, a rejection, or null when its code is configured to be ignored. */
export function normalizeResult(
  entry: ResultEntry,
  profile: InstrumentProfile,
  options: AstmOptions,
  memo?: Map<string, ResultTime>,
): KeyedResult | Rejection | null {
  const code = analyzerCode(entry, options);
  if (!code) return { reason: `R.3 has no test code in component(s) ${options.codeComponents.join(',')}` };
  if (options.ignoreCodes.includes(code)) return null;
  const read = readAccession(entry, options);
  const accession = typeof read === 'string' ? read : '';
  const reject = (reason: string): Rejection => ({ reason, analyzerCode: code, ...(accession ? { accession } : {}), observed: observed(entry, options) });
  if (typeof read === 'object') return reject(read.reason);
  if (!accession) return reject(`no accession in ${formatFieldLocation(options.accession, astmGrammar)}`);
  const time = resultTime(entry, options.resultTime, profile.timezone, memo);
  if (time.kind === 'rejected') return reject(time.reason);
  const unit = readUnit(entry, options);
  const mapped = lookupAnalyte(profile.mapping, code, unit);
  if (mapped.kind === 'rejected') return reject(mapped.reason);
  const status = readAstmStatus(fieldText(entry.result, 9), options.emptyStatus);
  if (status.kind === 'rejected') return reject(status.reason);
  const valueText = fieldText(entry.result, 4).trim();
  const parsed = keyedResultSchema.safeParse({
    accession,
    analyteLoinc: mapped.loinc,
    instrumentId: profile.id,
    resultedAt: time.resultedAt,
    valueText,
    ...valueFields(valueText),
    unit: mapped.unit ?? null,
    status: status.status,
    statusCode: status.statusCode,
    flags: repeats(entry.result, 7)
      .map((f) => f.trim())
      .filter(Boolean),
    referenceRange: component(entry.result, 6, 1).trim() || null,
    qc: mapped.qc || isQc(entry, options),
    source: { gatewayId: profile.gatewayId, driver: 'astm', analyzerCode: code, captureId: null },
  });
  if (!parsed.success) return reject(`invalid result: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** What the analyzer sent beside a rejected code (R.4 value, R.5 unit), for the codes the status page lists. */
function observed(entry: ResultEntry, options: AstmOptions): { value: string; unit: string | null } {
  return { value: fieldText(entry.result, 4).trim(), unit: readUnit(entry, options) };
}

// R.5.1 by default (LIS2-A2 10.1.6); the whole of R.5 for analyzers that write a component delimiter in a unit.
function readUnit(entry: ResultEntry, options: AstmOptions): string | null {
  const rec = recordFor(entry, options.unit);
  return (rec ? textAt(rec, options.unit).trim() : '') || null;
}

/**
 * The accession at the configured location, space padding trimmed. The key's identity: a whole field that holds
 * components (`O.3` when the analyzer sends `12^SID-7`) rejects the result, naming the component to configure.
 */
export function readAccession(entry: ResultEntry, options: AstmOptions): string | { reason: string } {
  const at = options.accession;
  const rec = recordFor(entry, at);
  const value = rec ? textAt(rec, at).trim() : '';
  if (value !== '' && holdsComponents(rec!, at)) {
    const text = formatFieldLocation(at, astmGrammar);
    return { reason: `accession location ${text} holds several parts: name one (e.g. ${text}.1)` };
  }
  return value;
}

/** QC: LIS2-A2 O.12 action code Q, H.12 processing id Q, or one of the instrument's rules. */
export function isQc(entry: ResultEntry, options: AstmOptions): boolean {
  if (entry.order && component(entry.order, 12, 1).trim().toUpperCase() === 'Q') return true;
  if (component(entry.header, 12, 1).trim().toUpperCase() === 'Q') return true;
  return options.qcRules.some((rule) => {
    const rec = recordFor(entry, rule.field);
    const value = rec ? textAt(rec, rule.field).trim() : '';
    return compiled(rule.pattern).test(value);
  });
}

// QC patterns come from the configuration: compiled once each, not once per result.
const patterns = new Map<string, RegExp>();

function compiled(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (re === undefined) patterns.set(pattern, (re = new RegExp(pattern)));
  return re;
}
