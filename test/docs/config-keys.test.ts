// config/labgate.example.yaml is the reference of every key: each key the schema has is written there at its
// place (set, or commented out as `# key: value`), and nothing is written there that the schema does not have.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configSchema } from '../../src/config/schema.js';
import { commentedKeyPaths, schemaPaths, valuePaths } from './config-paths.js';

const example = readFileSync(new URL('../../config/labgate.example.yaml', import.meta.url), 'utf8');
const schema = schemaPaths(configSchema);

function documented(text: string): Set<string> {
  return new Set([...valuePaths(parse(text), schema.opaque), ...commentedKeyPaths(text, schema.opaque)]);
}

describe('config/labgate.example.yaml against src/config/schema.ts', () => {
  const paths = documented(example);

  it('documents every key of the schema at its place', () => {
    expect(schema.keys.size).toBeGreaterThan(80);
    expect([...schema.keys].filter((p) => !paths.has(p))).toEqual([]);
  });

  it('documents no key the schema does not have', () => {
    expect([...paths].filter((p) => !schema.keys.has(p))).toEqual([]);
  });

  it('reads commented-out keys as keys at their place, and prose as prose', () => {
    const text = ['gateway:', '  http:', '    # tokenFile: /run/secret', '    # Default 8080; 0 picks: a free port', '    port: 8080', ''].join('\n');
    expect([...commentedKeyPaths(text, new Set())]).toEqual(['gateway.http.tokenFile']);
  });

  it('fails for a documented key the schema lacks and for a schema key left undocumented', () => {
    const misspelt = example.replace('    port: 8080\n', '    port: 8080\n    # portt: 8081\n');
    expect([...documented(misspelt)].filter((p) => !schema.keys.has(p))).toEqual(['gateway.http.portt']);
    const dropped = example.replace(/^ {4}maxConnections: 256\n/m, '');
    expect([...schema.keys].filter((p) => !documented(dropped).has(p))).toEqual(['gateway.http.maxConnections']);
  });
});
