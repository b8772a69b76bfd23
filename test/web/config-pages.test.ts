// The configuration pages over real files, a real store and the real reloader (config-rig.ts): who may change what,
// a change previewed as a diff with the reload's plan and applied through the reload, audited; hostile and mistaken
// forms refused with every problem named and nothing changed; a second editor told the file changed; restoring.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { versionOf } from '../../src/config/config-versions.js';
import { ADMIN_TOKEN, baseOf, configRig, withChem2, type ConfigRig } from './config-rig.js';
import { post } from './harness.js';

const rigs: ConfigRig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.stop();
});

async function rig(adminToken?: string | null): Promise<ConfigRig> {
  const r = await configRig(adminToken);
  rigs.push(r);
  return r;
}

const tcp = (base: string, extra: Record<string, string> = {}): Record<string, string> => ({
  change: 'add',
  base,
  kind: 'tcp-server',
  id: 'hema2',
  driver: 'hl7',
  timezone: 'Europe/Vienna',
  port: '5300',
  allow: '10.20.1.31',
  ...extra,
});

const fileText = (r: ConfigRig): string | null => {
  try {
    return readFileSync(r.instrumentsFile, 'utf8');
  } catch {
    return null;
  }
};

describe('who may change the configuration', () => {
  it('shows the configuration to any session and changes nothing until the session is unlocked with the admin token', async () => {
    const r = await rig();
    const v = await r.visit();
    const page = await r.get(v, '/configure');
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-configured="chem1"');
    expect(page.body).toContain('data-unlock');
    expect(page.body).not.toContain('Take out of service');
    const refused = await r.submit(v, '/configure/apply', tcp(baseOf(page.body)));
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('needs the admin token');
    expect((await r.get(v, '/configure/add?kind=tcp')).status).toBe(403);
    expect(fileText(r)).toBeNull();

    expect((await r.submit(v, '/configure/unlock', { token: 'wrong-token-wrong-token', name: 'Ana' })).status).toBe(401);
    expect((await r.submit(v, '/configure/unlock', { token: ADMIN_TOKEN, name: '<script>x</script>' })).status).toBe(422);
    const admin = await r.unlock(v);
    expect((await r.get(admin, '/configure')).body).toContain('Changing as <strong>Ana Weber</strong>');
    // The unlock belongs to its session: another session with the admin cookie copied is not unlocked.
    const other = await r.visit();
    const copied = { ...other, cookie: `${other.cookie}; ${admin.cookie.split('; ')[1]!}` };
    expect((await r.submit(copied, '/configure/preview', tcp(baseOf(page.body)))).status).toBe(403);
    // After an unlock the page that asked for it opens again, and nothing outside the configuration pages.
    for (const [next, to] of [
      ['/configure/mapping?id=chem1', '/configure/mapping?id=chem1'],
      ['//evil.example/configure', '/configure'],
      ['https://evil.example/', '/configure'],
      ['/configure/../logout', '/configure'],
    ]) {
      const w = await r.visit();
      const reply = await r.submit(w, '/configure/unlock', { token: ADMIN_TOKEN, name: 'Ana', next: next! });
      expect(reply.headers.location, next).toBe(to);
    }
    // Lock ends it.
    const locked = await r.submit(admin, '/configure/lock', {});
    expect(locked.headers['set-cookie']?.[0]).toMatch(/^labgate_admin=; .*Max-Age=0/);
  });

  it('throttles wrong admin tokens per address with the login, and is off without an admin token', async () => {
    const r = await rig();
    const v = await r.visit();
    for (let n = 0; n < 10; n++) expect((await r.submit(v, '/configure/unlock', { token: `guess-${n}-guess-guess`, name: 'Mallory' })).status).toBe(401);
    const throttled = await r.submit(v, '/configure/unlock', { token: ADMIN_TOKEN, name: 'Mallory' });
    expect(throttled.status).toBe(429);
    const off = await rig(null);
    const w = await off.visit();
    expect((await off.get(w, '/configure')).body).toContain('set gateway.http.adminTokenFile');
    expect((await off.submit(w, '/configure/unlock', { token: ADMIN_TOKEN, name: 'Ana' })).status).toBe(403);
  });

  it('refuses a change posted from another origin or without the CSRF token, unlocked or not', async () => {
    const r = await rig();
    const admin = await r.unlock(await r.visit());
    const base = versionOf(null);
    const foreign = await post(r.port, '/configure/apply', admin.cookie, { csrf: admin.csrf, ...tcp(base) }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await post(r.port, '/configure/apply', admin.cookie, tcp(base))).status).toBe(403);
    expect(fileText(r)).toBeNull();
  });
});

describe('a change', () => {
  it('is previewed as a diff with what the reload will do, applied through the reload, written owner-only and audited with who, when and the diff', async () => {
    const r = await rig();
    const admin = await r.unlock(await r.visit());
    const base = baseOf((await r.get(admin, '/configure')).body);
    expect(base).toBe(versionOf(null));
    const preview = await r.submit(admin, '/configure/preview', tcp(base));
    expect(preview.status, preview.body).toBe(200);
    expect(preview.body).toContain('hema2 started');
    expect(preview.body).toContain(
      '<span class="diff-add">+     transport: { kind: &quot;tcp-server&quot;, port: 5300, allow: [ &quot;10.20.1.31&quot; ] }</span>',
    );
    expect(fileText(r)).toBeNull();
    const applied = await r.submit(admin, '/configure/apply', tcp(base));
    expect(applied.status).toBe(200);
    expect(applied.body).toContain('Applied: hema2 added (hl7 listening on port 5300)');
    expect(r.running().instruments.map((i) => i.id)).toEqual(['chem1', 'hema2']);
    expect(r.plans.map((p) => p.added.map((i) => i.id))).toEqual([['hema2']]);
    const written = fileText(r)!;
    expect(written).toContain('id: "hema2"');
    expect(statSync(r.instrumentsFile).mode & 0o777).toBe(0o600);
    expect(r.audit()).toEqual([
      {
        actor: expect.stringMatching(/^admin:Ana Weber \(session [0-9a-f]{8}\)$/),
        action: 'config-change',
        subject: 'hema2',
        detail: expect.objectContaining({ summary: 'hema2 added (hl7 listening on port 5300)', from: base, to: versionOf(written), plan: 'hema2 started' }),
      },
    ]);
    expect(r.audit()[0]!.detail['diff']).toContain('+   - id: "hema2"');
    // The same form again is refused: the file moved on.
    const again = await r.submit(admin, '/configure/apply', tcp(base));
    expect(again.status).toBe(409);
    expect(again.body).toContain('the configuration changed since you opened this form');
    expect(r.audit()).toHaveLength(1);
  });
});

const LOINCS = { GLU: '14749-6', NA: '2951-2', K: '2823-3', CREA: '14682-9' } as const;

/** The mapping form's fields for chem2's four codes, read from the page (rows in the page's order). */
function mappingFields(page: string, loinc: (code: string) => string): Record<string, string> {
  const fields: Record<string, string> = { change: 'mapping', id: 'chem2', base: baseOf(page), rows: /name="rows" value="(\d+)"/.exec(page)![1]! };
  for (const m of page.matchAll(/<input type="hidden" name="code\.(\d+)" value="([^"]+)">/g)) {
    fields[`code.${m[1]}`] = m[2]!;
    fields[`loinc.${m[1]}`] = loinc(m[2]!);
    fields[`unit.${m[1]}`] = /<input id="f-unit\.\d+" name="unit\.(\d+)" value="([^"]*)"/.exec(page.slice(page.indexOf(`name="unit.${m[1]}"`) - 40))![2]!;
  }
  return fields;
}

describe('mapping codes', () => {
  it('suggests LOINCs without filling them, refuses a wrong check digit at its field, applies the mapping without a restart, then reprocesses what it now reads', async () => {
    const r = await rig();
    const admin = await withChem2(r);
    const page = (await r.get(admin, '/configure/mapping?id=chem2')).body;
    expect([...page.matchAll(/data-suggestion="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(Object.values(LOINCS).sort());
    expect([...page.matchAll(/name="loinc\.\d+" value="([^"]*)"/g)].map((m) => m[1])).toEqual(['', '', '', '', '']);
    const slip = mappingFields(page, (code) => (code === 'GLU' ? '14749-5' : LOINCS[code as keyof typeof LOINCS]));
    const refused = await r.submit(admin, '/configure/preview', slip);
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('14749-5 is not a LOINC: its check digit should be 6 (14749-6)');
    expect(refused.body).toMatch(/data-row="GLU" class="field-error"/);
    expect(r.audit()).toHaveLength(1);

    const fields = mappingFields(page, (code) => LOINCS[code as keyof typeof LOINCS]);
    const preview = await r.submit(admin, '/configure/preview', fields);
    expect(preview.body).toContain('chem2: the new mapping from its next message');
    const applied = await r.submit(admin, '/configure/apply', fields);
    expect(applied.body).toContain('Applied: chem2: mapping of 4 codes');
    expect(r.plans.at(-1)).toMatchObject({ added: [], restarted: [], remapped: [{ changed: ['mapping'] }] });
    expect(r.running().instruments[1]!.mapping).toEqual([
      { code: 'CREA', loinc: '14682-9', unit: 'umol/L' },
      { code: 'GLU', loinc: '14749-6', unit: 'mmol/L' },
      { code: 'K', loinc: '2823-3', unit: 'mmol/L' },
      { code: 'NA', loinc: '2951-2', unit: 'mmol/L' },
    ]);
    expect(applied.body).toContain('1 rejected message of chem2 now read as\n4 results');
    const reprocessed = await r.submit(admin, '/configure/reprocess', { id: 'chem2' });
    expect(reprocessed.body).toContain('chem2: 1 message reprocessed, 4 results stored.');
    expect(
      r.store
        .recentResults(10)
        .map((x) => x.analyteLoinc)
        .sort(),
    ).toEqual(Object.values(LOINCS).sort());
  });

  it('copies the mapping of another instrument of the same driver for the codes not mapped yet', async () => {
    const r = await rig();
    const admin = await withChem2(r);
    const base = baseOf((await r.get(admin, '/configure/mapping?id=chem2')).body);
    const applied = await r.submit(admin, '/configure/apply', { change: 'copy-mapping', id: 'chem2', from: 'chem1', base });
    expect(applied.body).toContain('chem2: 2 codes mapped as on chem1');
    expect(r.running().instruments[1]!.mapping.map((m) => m.code)).toEqual(['GLU', 'NA']);
  });
});

describe('a hostile or mistaken form', () => {
  it('is refused with a clear message naming every problem, shows what was typed escaped, and changes nothing', async () => {
    const r = await rig();
    const admin = await withChem2(r);
    const before = fileText(r);
    const audited = r.audit().length;
    const base = baseOf((await r.get(admin, '/configure')).body);
    const mappingBase = { change: 'mapping', id: 'chem2', base, rows: '1', 'code.0': 'GLU', 'loinc.0': '14749-6', 'unit.0': 'mmol/L' };
    const cases: [string, Record<string, string>, string][] = [
      ['duplicate id', tcp(base, { id: 'chem1' }), "duplicate id 'chem1'"],
      ['a port already used (the HTTP listener)', tcp(base, { port: '8099' }), 'port 8099 is also used by gateway.http'],
      [
        'a serial port already used',
        { ...tcp(base), kind: 'serial', path: '/dev/chem1', baudRate: '9600', dataBits: '8', parity: 'none' },
        "serial port '/dev/chem1' is also used by instruments[0]",
      ],
      ['YAML in the id', tcp(base, { id: 'hema3\n    enabled: false' }), 'the id holds a control character'],
      ['HTML in the id', tcp(base, { id: '<img src=x onerror=alert(1)>' }), 'the id looks like HTML markup'],
      ['an unknown zone', tcp(base, { timezone: 'Mars/Olympus_Mons' }), 'expected an IANA time zone'],
      ['YAML in the zone', tcp(base, { timezone: 'UTC"\nsinks: {}' }), 'the timezone holds a control character'],
      ['YAML in the allow list', tcp(base, { allow: '10.0.0.1"]\n  - 0.0.0.0/0' }), 'the allow holds a control character'],
      ['an address that is none', tcp(base, { allow: 'analyzer.lab' }), 'expected an IP address or a CIDR block'],
      ['a port that is no number', tcp(base, { port: '53; rm -rf /' }), 'port: expected a whole number from 1 to 65535'],
      ['YAML tags in the options', tcp(base, { options: 'code: !!js/function "function(){}"' }), 'the options use YAML tags, anchors or aliases'],
      ['an alias in the options', tcp(base, { options: 'a: &x [1]\nb: *x' }), 'the options use YAML tags, anchors or aliases'],
      ['a key the driver does not know', tcp(base, { options: 'sinks: {postgres: {url: "postgres://x"}}' }), "unknown key 'sinks'"],
      ['HTML in the options', tcp(base, { options: 'sendingApplication: <script>alert(1)</script>' }), 'the options looks like HTML markup'],
      ['a wrong LOINC check digit', { ...mappingBase, 'loinc.0': '2345-8' }, '2345-8 is not a LOINC: its check digit should be 7'],
      ['YAML in a LOINC', { ...mappingBase, 'loinc.0': '14749-6\n  qc: true' }, 'expected a LOINC such as 2345-7'],
      ['YAML in a code', { ...mappingBase, 'code.0': 'GLU"}\n- {code: X' }, 'the code holds a control character'],
      ['HTML in a code', { ...mappingBase, 'code.0': '<b>GLU</b>' }, 'the code looks like HTML markup'],
      ['HTML in a unit', { ...mappingBase, 'unit.0': '<i>mmol/L' }, 'the unit looks like HTML markup'],
      ['a duplicate code', { ...mappingBase, rows: '2', 'code.1': 'GLU', 'loinc.1': '2345-7', 'unit.1': 'mg/dL' }, "duplicate test code 'GLU'"],
      [
        'YAML in a zone setting',
        { change: 'settings', id: 'chem2', base, timezone: 'UTC\nenabled: false', options: '' },
        'the clock zone holds a control character',
      ],
      ['a change to an instrument IT owns', { change: 'service', id: 'chem1', base, enabled: 'false' }, 'chem1 is configured in'],
    ];
    for (const [what, fields, message] of cases) {
      const reply = await r.submit(admin, '/configure/preview', fields);
      expect(reply.status, what).toBe(422);
      expect(reply.body, what).toContain(message.replace(/'/g, '&#39;').replace(/"/g, '&quot;'));
      expect(reply.body, what).not.toMatch(/<img src=x|<script>alert|<b>GLU|<i>mmol/);
      const apply = await r.submit(admin, '/configure/apply', fields);
      expect(apply.status, what).toBe(422);
    }
    // Several problems at once: each named.
    const many = await r.submit(admin, '/configure/preview', tcp(base, { id: 'chem1', port: '8099', timezone: 'Nowhere/City' }));
    expect(many.body).toContain('data-problems="3"');
    expect(fileText(r)).toBe(before);
    expect(r.audit()).toHaveLength(audited);
    expect(r.running().instruments.map((i) => i.id)).toEqual(['chem1', 'chem2']);
  });
});

describe('two editors at once', () => {
  it('tells the second one the configuration changed, by whom, and overwrites nothing', async () => {
    const r = await rig();
    await withChem2(r);
    const ana = await r.unlock(await r.visit(), 'Ana Weber');
    const ben = await r.unlock(await r.visit(), 'Ben Okafor');
    const anaForm = mappingFields((await r.get(ana, '/configure/mapping?id=chem2')).body, (code) => LOINCS[code as keyof typeof LOINCS]);
    const benForm = mappingFields((await r.get(ben, '/configure/mapping?id=chem2')).body, () => 'X-BEN');
    expect((await r.submit(ana, '/configure/apply', anaForm)).status).toBe(200);
    const anas = fileText(r);
    for (const path of ['/configure/preview', '/configure/apply']) {
      const reply = await r.submit(ben, path, benForm);
      expect(reply.status, path).toBe(409);
      expect(reply.body).toContain('Not applied: the configuration changed since you opened this form.');
      expect(reply.body).toContain('<strong>chem2: mapping of 4 codes</strong>, by admin:Ana Weber');
    }
    expect(fileText(r)).toBe(anas);
    // A change made by hand is named as such.
    writeFileSync(r.instrumentsFile, `${anas!}# edited by hand\n`);
    const hand = await r.submit(ana, '/configure/apply', { ...anaForm, base: versionOf(anas) });
    expect(hand.status).toBe(409);
    expect(hand.body).toContain('It was changed outside this page (by hand).');
  });
});

describe('out of service, settings and restoring', () => {
  it('takes an instrument out of service and back, changes its zone without a restart, restores a previous version; each audited', async () => {
    const r = await rig();
    const admin = await withChem2(r);
    const first = fileText(r)!;
    const submit = async (fields: Record<string, string>): Promise<string> => {
      const base = baseOf((await r.get(admin, '/configure')).body);
      const reply = await r.submit(admin, '/configure/apply', { ...fields, base });
      expect(reply.status, reply.body).toBe(200);
      return reply.body;
    };
    expect(await submit({ change: 'service', id: 'chem2', enabled: 'false' })).toContain('chem2 taken out of service.</strong> chem2 stopped.');
    expect(r.running().instruments[1]!.enabled).toBe(false);
    expect(fileText(r)).toContain('enabled: false');
    expect(await submit({ change: 'service', id: 'chem2', enabled: 'true' })).toContain('chem2 started');
    expect(await submit({ change: 'settings', id: 'chem2', timezone: 'Europe/Vienna', options: 'framing: none' })).toContain(
      'chem2: the new timezone from its next message',
    );
    const overview = (await r.get(admin, '/configure')).body;
    expect(overview).toContain(`data-version="${versionOf(first)}"`);
    const restored = await submit({ change: 'restore', version: versionOf(first) });
    expect(restored).toContain(`version ${versionOf(first)} restored`);
    expect(fileText(r)).toBe(first);
    expect(r.running().instruments[1]!.timezone).toBe('UTC');
    expect(r.audit().map((a) => [a.action, a.detail['summary']])).toEqual([
      ['config-change', 'chem2 added (astm on /dev/chem2)'],
      ['config-change', 'chem2 taken out of service'],
      ['config-change', 'chem2 back in service'],
      ['config-change', 'chem2: clock zone Europe/Vienna, options set'],
      ['config-restore', `version ${versionOf(first)} restored`],
    ]);
    expect((await r.get(admin, '/configure')).body).toContain('chem2: clock zone Europe/Vienna, options set</strong> · admin:Ana Weber');
  });
});

describe('the whole check', () => {
  it('is what check-config checks: a file the main configuration names that is gone refuses every change, named', async () => {
    const r = await rig();
    const admin = await r.unlock(await r.visit());
    const main = readFileSync(r.file, 'utf8');
    writeFileSync(r.file, `${main}sinks:\n  lims: {baseUrl: "https://lims.example/api", auth: {kind: static, tokenFile: "${r.dir}/gone-token"}}\n`);
    const reply = await r.submit(admin, '/configure/preview', tcp(baseOf((await r.get(admin, '/configure')).body)));
    expect(reply.status).toBe(422);
    expect(reply.body).toContain(`sinks.lims.auth.tokenFile: ${r.dir}/gone-token does not exist`);
    expect(fileText(r)).toBeNull();
  });
});
