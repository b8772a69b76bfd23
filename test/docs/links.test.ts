// README.md is the front door and docs/ the manual: every relative link between them (and into the code, the
// drivers' READMEs, the screenshots) names a file that exists, every #anchor a heading of that page, and the front
// door stays short enough to read in five minutes.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
// Links that leave the repository: the design notes kept beside the checkout, absent from a fresh clone.
const OUTSIDE = new Set(['../shared/ARCHITECTURE.md']);

/** The markdown pages checked: the README, docs/, and the contracts and driver READMEs the manual links to. */
function pages(): string[] {
  const docs = readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md'));
  const drivers = readdirSync(join(repo, 'drivers')).filter((d) => existsSync(join(repo, 'drivers', d, 'README.md')));
  const sinks = readdirSync(join(repo, 'src/sinks')).filter((f) => f.endsWith('.md'));
  return ['README.md', ...docs.map((f) => `docs/${f}`), ...drivers.map((d) => `drivers/${d}/README.md`), ...sinks.map((f) => `src/sinks/${f}`)];
}

/** The text outside fenced code blocks and inline code, where a `[x](y)` is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Link targets: `[text](target)` and `![alt](target)`, text spanning lines included. */
function linkTargets(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens; repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** What is wrong with each relative link of `page` (a path from the repository root), given how to read a file. */
function brokenLinks(page: string, text: string, read: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const file = path === '' ? page : relative(repo, resolve(repo, dirname(page), decodeURIComponent(path)));
    if (file.startsWith('..')) {
      if (!OUTSIDE.has(file)) problems.push(`${page}: ${target} leaves the repository`);
      continue;
    }
    const body = read(file);
    if (body === undefined) problems.push(`${page}: ${target}: no such file`);
    else if (anchor !== undefined && !(file.endsWith('.md') && anchors(body).has(anchor))) problems.push(`${page}: ${target}: no such heading`);
  }
  return problems;
}

const readRepo = (path: string): string | undefined => {
  const full = join(repo, path);
  if (!existsSync(full)) return undefined;
  return path.endsWith('.md') ? readFileSync(full, 'utf8') : '';
};

describe('links in README.md and docs/', () => {
  it('every relative link names an existing file, and every anchor a heading of it', () => {
    const checked = pages();
    expect(checked.length).toBeGreaterThan(8);
    expect(checked.flatMap((p) => brokenLinks(p, readFileSync(join(repo, p), 'utf8'), readRepo))).toEqual([]);
  });

  it('README.md links every page of docs/', () => {
    const linked = new Set(linkTargets(readFileSync(join(repo, 'README.md'), 'utf8')).map((t) => t.split('#')[0]));
    const docs = readdirSync(join(repo, 'docs')).filter((f) => f.endsWith('.md'));
    expect(docs.filter((f) => !linked.has(`docs/${f}`))).toEqual([]);
  });

  it('README.md stays under 160 lines', () => {
    expect(readFileSync(join(repo, 'README.md'), 'utf8').split('\n').length).toBeLessThan(160);
  });

  it('finds a missing file, a missing heading and a link out of the repository, and not a link in code', () => {
    const files: Record<string, string> = { 'docs/a.md': '# A page\n\n## Who may change it?\n', 'docs/b.png': '' };
    const text = [
      '[ok](a.md#who-may-change-it) ![ok](b.png) [ok](#top) [web](https://example.org/x)',
      '[gone](c.md) [wrong](a.md#who-may-change) [out](../../elsewhere.md)',
      '`[code](d.md)`',
      '```',
      '[fenced](e.md)',
      '```',
      '# Top',
    ].join('\n');
    expect(brokenLinks('docs/x.md', text, (p) => (p === 'docs/x.md' ? text : files[p]))).toEqual([
      'docs/x.md: c.md: no such file',
      'docs/x.md: a.md#who-may-change: no such heading',
      'docs/x.md: ../../elsewhere.md leaves the repository',
    ]);
  });
});
