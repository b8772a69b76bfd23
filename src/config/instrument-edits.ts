// The status page's changes to the instruments file, made on the parsed YAML document rather than on text: a value
// typed on a form becomes a scalar node (quoted as the YAML library must quote it), never a line of YAML, so no field
// can add a key or a list item; and what the change does not touch (comments IT wrote, other instruments) stays as it
// was, so the diff shows the change and nothing else. Pure: the caller reads and writes the file.
import { isMap, isSeq, parseDocument, Document, type Node, type YAMLMap, type YAMLSeq } from 'yaml';

/** One mapping row as written: `unit` absent accepts any unit, null means the result carries none. */
export interface MappingRow {
  code: string;
  loinc: string;
  unit?: string | null;
  qc?: true;
}

/** A new instrument as the page writes it (the schema fills the defaults). */
export interface NewInstrument {
  id: string;
  driver: string;
  timezone: string;
  transport: Record<string, unknown>;
  options?: Record<string, unknown>;
}

/** What a change does to the instruments file. */
export type InstrumentEdit =
  | { kind: 'add'; instrument: NewInstrument }
  | { kind: 'mapping'; id: string; mapping: readonly MappingRow[] }
  | { kind: 'settings'; id: string; timezone: string; options: Record<string, unknown> }
  | { kind: 'service'; id: string; enabled: boolean };

/** The new text, or why the change cannot be made to this file. */
export type EditOutcome = { kind: 'ok'; text: string } | { kind: 'refused'; message: string };

const HEADER = [
  ' Instruments managed on the labgate status page (Configure). The service writes this file in its state directory:',
  ' every change is validated together with the main configuration file, saved atomically, audited, and the version',
  ' it replaces kept in config-history/. It may be edited by hand too (then systemctl reload labgate); the page sees',
  ' the change and never overwrites it unseen.',
].join('\n');

/** Applies `edit` to the instruments file's text (null: there is no file yet). */
export function editInstruments(text: string | null, edit: InstrumentEdit): EditOutcome {
  const doc = text === null || text.trim() === '' ? fresh() : parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) return { kind: 'refused', message: 'the instruments file is not valid YAML; restore a previous version first' };
  if (!doc.has('instruments') || doc.get('instruments') === null) doc.set('instruments', doc.createNode([]));
  const list = doc.get('instruments', true);
  if (!isSeq(list)) return { kind: 'refused', message: 'the instruments file has no list of instruments; restore a previous version first' };
  if (edit.kind === 'add') {
    list.add(instrumentNode(doc, edit.instrument));
    return render(doc);
  }
  const item = find(list, edit.id);
  if (!item) return { kind: 'refused', message: `there is no instrument '${edit.id}' in the instruments file (any more)` };
  if (edit.kind === 'mapping') item.set('mapping', mappingNode(doc, edit.mapping));
  else if (edit.kind === 'service') {
    if (edit.enabled) item.delete('enabled');
    else item.set('enabled', false);
  } else {
    item.set('timezone', edit.timezone);
    if (Object.keys(edit.options).length) item.set('options', doc.createNode(edit.options));
    else item.delete('options');
  }
  return render(doc);
}

/** The instruments listed in a file's text, as plain values (none for a missing or unreadable file). */
export function listedInstruments(text: string | null): Record<string, unknown>[] {
  if (text === null) return [];
  const doc = parseDocument(text, { uniqueKeys: true });
  const value: unknown = doc.errors.length ? null : doc.toJS({ maxAliasCount: 100 });
  const list = typeof value === 'object' && value !== null ? (value as { instruments?: unknown }).instruments : undefined;
  return Array.isArray(list) ? list.filter((i): i is Record<string, unknown> => typeof i === 'object' && i !== null && !Array.isArray(i)) : [];
}

function fresh(): Document {
  const doc = new Document({ instruments: [] });
  doc.commentBefore = HEADER;
  return doc;
}

function find(list: YAMLSeq, id: string): YAMLMap | undefined {
  return list.items.find((item): item is YAMLMap => isMap(item) && String(item.get('id')).trim() === id);
}

function instrumentNode(doc: Document, i: NewInstrument): Node {
  const node = doc.createNode({ id: i.id, driver: i.driver, timezone: i.timezone, transport: i.transport, ...(i.options ? { options: i.options } : {}) });
  const transport = (node as YAMLMap).get('transport', true);
  if (isMap(transport)) transport.flow = true;
  return node;
}

function mappingNode(doc: Document, rows: readonly MappingRow[]): Node {
  const node = doc.createNode(
    rows.map((r) => ({ code: r.code, loinc: r.loinc, ...(r.unit !== undefined ? { unit: r.unit } : {}), ...(r.qc ? { qc: true } : {}) })),
  );
  for (const item of (node as YAMLSeq).items) if (isMap(item)) item.flow = true;
  return node;
}

// Strings the page adds are double-quoted: read back the same by any YAML reader (NO stays a code, not false).
function render(doc: Document): EditOutcome {
  return { kind: 'ok', text: doc.toString({ defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 }) };
}
