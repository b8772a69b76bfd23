// The mapping form of an instrument that sent more codes than a page holds: a hundred rows a page (those needing a
// mapping first), links to the others, and a page applied on its own: the codes on the other pages keep their
// mapping. A page number that is not one is refused cleanly.
import { afterEach, describe, expect, it } from 'vitest';
import { baseOf, configRig, withChem2, type ConfigRig, type Visitor } from './config-rig.js';

const rigs: ConfigRig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.stop();
});

/** chem2 with its four codes and 250 more it sent, none mapped: 254 codes, three pages. */
async function many(): Promise<{ r: ConfigRig; admin: Visitor }> {
  const r = await configRig();
  rigs.push(r);
  const admin = await withChem2(r);
  const rejections = Array.from({ length: 250 }, (_, i) => ({
    reason: 'unmapped',
    analyzerCode: `X${String(i).padStart(3, '0')}`,
    observed: { value: '1', unit: 'mg/L' },
  }));
  r.store.ingest({ capture: { instrumentId: 'chem2', protocol: 'astm', receivedAt: Date.now(), raw: Buffer.from('X') }, results: [], rejections });
  return { r, admin };
}

/** The codes of a mapping page's rows, and its form's fields with `loinc` filled where it gives one. */
function form(page: string, loinc: (code: string) => string = () => ''): { codes: string[]; fields: Record<string, string> } {
  const fields: Record<string, string> = {
    change: 'mapping',
    id: 'chem2',
    base: baseOf(page),
    rows: /name="rows" value="(\d+)"/.exec(page)![1]!,
    page: /name="page" value="(\d+)"/.exec(page)![1]!,
  };
  const codes: string[] = [];
  for (const m of page.matchAll(/<input type="hidden" name="code\.(\d+)" value="([^"]+)">/g)) {
    codes.push(m[2]!);
    fields[`code.${m[1]}`] = m[2]!;
    fields[`loinc.${m[1]}`] = loinc(m[2]!);
    fields[`unit.${m[1]}`] = 'mg/L';
  }
  return { codes, fields };
}

describe('the mapping form a page at a time', () => {
  it('lists a hundred codes a page with links to the others, and applies a page without touching the others', async () => {
    const { r, admin } = await many();
    const first = (await r.get(admin, '/configure/mapping?id=chem2')).body;
    expect(first).toContain('Page 1 of 3');
    expect(first).toContain('href="/configure/mapping?id=chem2&amp;page=2"');
    const one = form(first);
    expect(one.codes).toHaveLength(100);
    // The blank row for a code not seen yet is on every page.
    expect(one.fields.rows).toBe('101');
    const secondPage = await r.get(admin, '/configure/mapping?id=chem2&page=2');
    expect(secondPage.status).toBe(200);
    const two = form(secondPage.body, (code) => (code === 'X150' ? '2823-3' : ''));
    expect(two.codes).toHaveLength(100);
    expect(two.codes.filter((c) => one.codes.includes(c))).toEqual([]);
    expect(two.codes).toContain('X150');
    const third = form((await r.get(admin, '/configure/mapping?id=chem2&page=3')).body);
    expect(third.codes).toHaveLength(54);
    expect(new Set([...one.codes, ...two.codes, ...third.codes]).size).toBe(254);

    const applied = await r.submit(admin, '/configure/apply', two.fields);
    expect(applied.status, applied.body.slice(0, 500)).toBe(200);
    expect(r.running().instruments[1]!.mapping).toEqual([{ code: 'X150', loinc: '2823-3', unit: 'mg/L' }]);
    // Page 1, opened again, maps GLU: X150, on page 2, keeps its line.
    const again = form((await r.get(admin, '/configure/mapping?id=chem2')).body, (code) => (code === 'GLU' ? '14749-6' : ''));
    expect(again.codes).not.toContain('X150');
    const second = await r.submit(admin, '/configure/apply', again.fields);
    expect(second.status, second.body.slice(0, 500)).toBe(200);
    expect(r.running().instruments[1]!.mapping).toEqual([
      { code: 'X150', loinc: '2823-3', unit: 'mg/L' },
      { code: 'GLU', loinc: '14749-6', unit: 'mg/L' },
    ]);
  });

  it('refuses a page number that is not one, or past the last, naming none of it', async () => {
    const { r, admin } = await many();
    for (const query of ['page=0', 'page=4', 'page=-1', 'page=abc', 'page=1e2', 'page=2&page=3', 'page=%3Cscript%3E', `page=${'9'.repeat(400)}`]) {
      const reply = await r.get(admin, `/configure/mapping?id=chem2&${query}`);
      expect(reply.status, query).toBe(404);
      expect(reply.body).toMatch(/There is no such page of chem2(&#39;|')s codes \(it has 3\)\./);
      expect(reply.body).not.toContain('<script>');
    }
  });
});
