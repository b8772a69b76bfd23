// Key paths (`gateway.http.port`, `instruments[].transport.kind`) of the configuration schema and of a YAML
// document, so the example configuration can be compared with the schema key by key at each key's place.
import { parse } from 'yaml';

/** The schema's key paths, and the paths whose insides are free-form (records: driver options, unit maps). */
export interface SchemaPaths {
  keys: Set<string>;
  opaque: Set<string>;
}

type Def = Record<string, unknown> & { type?: string };

/** Every key path of a zod 4 schema; unions contribute the keys of all their members. */
export function schemaPaths(schema: unknown): SchemaPaths {
  const out: SchemaPaths = { keys: new Set(), opaque: new Set() };
  const walk = (node: unknown, path: string): void => {
    const def = (node as { _zod?: { def?: Def } })._zod?.def;
    if (!def) return;
    if (def.type === 'object') {
      for (const [key, inner] of Object.entries(def['shape'] as Record<string, unknown>)) {
        const child = path ? `${path}.${key}` : key;
        out.keys.add(child);
        walk(inner, child);
      }
    } else if (def.type === 'array') walk(def['element'], `${path}[]`);
    else if (def.type === 'record') out.opaque.add(path);
    else if (def.type === 'union') (def['options'] as unknown[]).forEach((o) => walk(o, path));
    else if (def.type === 'pipe') walk(def['in'], path);
    else if (def['innerType']) walk(def['innerType'], path);
  };
  walk(schema, '');
  return out;
}

/** Key paths of a parsed YAML value; the insides of opaque paths are not keys of the schema. */
export function valuePaths(value: unknown, opaque: ReadonlySet<string>, path = ''): string[] {
  if (opaque.has(path)) return [];
  if (Array.isArray(value)) return value.flatMap((item) => valuePaths(item, opaque, `${path}[]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const child = path ? `${path}.${key}` : key;
    return [child, ...valuePaths(inner, opaque, child)];
  });
}

// A commented-out key: `# key: value` with the `#` where the key would stand.
const commentedKey = /^(\s*)# ([a-z][A-Za-z0-9]*):( .*)?$/;

/**
 * Paths of the keys written commented out. Each candidate line is uncommented alone; when the document still
 * parses and gains a path, that path is the key it documents. A line that does not parse so is prose.
 */
export function commentedKeyPaths(text: string, opaque: ReadonlySet<string>): Set<string> {
  const lines = text.split('\n');
  const before = new Set(valuePaths(parse(text), opaque));
  const found = new Set<string>();
  lines.forEach((line, i) => {
    const m = commentedKey.exec(line);
    if (!m) return;
    const uncommented = [...lines.slice(0, i), `${m[1]}${line.slice(m[1]!.length + 2)}`, ...lines.slice(i + 1)].join('\n');
    let after: unknown;
    try {
      after = parse(uncommented);
    } catch {
      return;
    }
    for (const p of valuePaths(after, opaque)) if (!before.has(p)) found.add(p);
  });
  return found;
}
