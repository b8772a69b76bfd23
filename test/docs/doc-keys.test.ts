// The manual names configuration keys in passing (`gateway.http.tokenFile`, `delivery.failureThreshold`,
// `transport.allow`): each one it names is a key of the schema, so a renamed or removed key cannot live on in the
// docs. (The example configuration documents every key the schema has: config-keys.test.ts.)
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { schemaPaths } from './config-paths.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const SECTIONS = ['gateway', 'sinks', 'delivery', 'alerts', 'transport'];

/** Backticked key paths of the configuration's sections, without a `: value` after them. */
function namedKeys(text: string): string[] {
  const pattern = new RegExp(`\`((?:${SECTIONS.join('|')})(?:\\.[A-Za-z*]+)+)(?::[^\`]*)?\``, 'g');
  return [...text.matchAll(pattern)].map((m) => m[1]!);
}

/** Whether `named` is a schema key: `transport.x` is an instrument's, `*` stands for any one key, a trailing `*` for all. */
function isKey(named: string, keys: ReadonlySet<string>): boolean {
  const path = named.startsWith('transport.') ? `instruments[].${named}` : named;
  if (path.endsWith('.*')) return keys.has(path.slice(0, -2));
  const pattern = new RegExp(`^${path.replace(/[.[\]]/g, '\\$&').replace(/\\\.\*/g, '\\.[^.]+')}$`);
  return [...keys].some((k) => pattern.test(k));
}

describe('configuration keys named in README.md and docs/', () => {
  const { keys } = schemaPaths(configSchema);
  const files = ['README.md', ...readdirSync(join(repo, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : []))];
  const named = files.flatMap((f) => namedKeys(readFileSync(join(repo, f), 'utf8')).map((k) => ({ file: f, key: k })));

  it('are keys of the schema', () => {
    expect(named.length).toBeGreaterThan(15);
    expect(named.filter(({ key }) => !isKey(key, keys))).toEqual([]);
  });

  it('fails for a key the schema does not have, and reads wildcards and values', () => {
    const text = '`gateway.http.tokenFile` `gateway.http.tokenFiles` `sinks.*.maxAnswerBytes` `gateway.*` `transport.allow` `transport.alow` `gateway.http.host: 127.0.0.1`';
    expect(namedKeys(text).filter((k) => !isKey(k, keys))).toEqual(['gateway.http.tokenFiles', 'transport.alow']);
  });
});
