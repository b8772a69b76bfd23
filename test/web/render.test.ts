// The pure parts: escaping by construction, relative times, verdicts, and conflict payloads read without
// anything but clinical fields.
import { describe, expect, it } from 'vitest';
import { instrumentLamp, overallLamp, redItems, relativeTime, sinkLamp } from '../../src/web/status/format.js';
import { payloadFields } from '../../src/web/status/gateway-views.js';
import { escapeHtml, html } from '../../src/web/status/html.js';
import { queuesSection } from '../../src/web/status/render-queues.js';
import { codesSection } from '../../src/web/status/render-codes.js';
import { reloadSection } from '../../src/web/status/render-reload.js';
import { instrumentsSection, resultsSection } from '../../src/web/status/render-status.js';
import { fields, instrument, sink } from './fake-source.js';

describe('html', () => {
  it('escapes every interpolated value, nested arrays too, and keeps SafeHtml', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"x" & \'y\''}">${['<a>', inner, 3, null, false]}</p>`.value).toBe(
      '<p title="&quot;x&quot; &amp; &#39;y&#39;">&lt;a&gt;<b>&lt;i&gt;</b>3</p>',
    );
    expect(escapeHtml('`')).toBe('&#96;');
  });

  it('shows bidirectional and other invisible characters as their codes, so a value cannot read as another', () => {
    // U+202E would make "5.1 mmol/L" display right to left; U+200B hides inside an accession; NUL and ESC from the wire.
    const page = resultsSection({
      gatewayId: 'g',
      now: 0,
      instruments: [],
      sinks: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
      recentResults: [{ ...fields('A\u200B1'), valueText: '\u202E1.5', unit: 'mmol/L\u2066', dedupKey: 'k', delivery: [] }],
    }).value;
    expect(page).toContain('\\u202E1.5');
    expect(page).toContain('A\\u200B1');
    expect(page).toContain('mmol/L\\u2066');
    expect(page).not.toMatch(/[\u202E\u200B\u2066]/);
    expect(html`<p title="${'a\u0000b\u001bc\u0085'}">${'x\u061Cy\uFEFF'}</p>`.value).toBe('<p title="a\\u0000b\\u001Bc\\u0085">x\\u061Cy\\uFEFF</p>');
    expect(escapeHtml('Grüße 5,1 µmol/L ≤ 7 — 血糖')).toBe('Grüße 5,1 µmol/L ≤ 7 — 血糖');
  });
});

describe('format', () => {
  it('writes relative times as a technician reads them', () => {
    expect(relativeTime(null, 0)).toBe('never');
    expect(relativeTime(0, 45_000)).toBe('45 s ago');
    expect(relativeTime(0, 12 * 60_000)).toBe('12 min ago');
    expect(relativeTime(0, 5 * 3_600_000)).toBe('5 h ago');
    expect(relativeTime(0, 3 * 86_400_000)).toBe('3 d ago');
    expect(relativeTime(20_000, 0)).toBe('in 20 s');
  });

  it('is red when not talking or paused, amber when a person is needed', () => {
    expect(instrumentLamp(instrument('a'))).toBe('green');
    expect(instrumentLamp(instrument('a', { state: 'waiting-for-device' }))).toBe('red');
    expect(instrumentLamp(instrument('a', { state: 'error' }))).toBe('red');
    expect(instrumentLamp(instrument('a', { rejected: 1 }))).toBe('amber');
    expect(sinkLamp(sink('lims', { circuit: 'paused' }))).toBe('red');
    expect(sinkLamp(sink('lims', { dead: 1 }))).toBe('amber');
    const base = {
      gatewayId: 'g',
      now: 0,
      instruments: [instrument('a')],
      sinks: [sink('lims')],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
    };
    expect(overallLamp(base)).toBe('green');
    expect(overallLamp({ ...base, rejectedCaptures: [{ id: 1, instrumentId: 'a', protocol: 'astm', receivedAt: 0, reasons: [] }] })).toBe('amber');
    const red = { ...base, instruments: [instrument('a', { state: 'error' })], sinks: [sink('lims', { circuit: 'probing' })] };
    expect(overallLamp(red)).toBe('red');
    expect(redItems(red)).toEqual(['a: error', 'lims: paused']);
  });
});

describe('payloadFields', () => {
  it('reads a ResultPayload or a bare result, keeping clinical fields only', () => {
    const result = { ...fields('A1'), analyteLoinc: '2823-3', source: { analyzerCode: 'K' }, patientName: 'DOE^JANE', dateOfBirth: '1970-01-01' };
    const read = payloadFields(JSON.stringify({ dedupKey: 'k', result }));
    expect(read).toMatchObject({ accession: 'A1', loinc: '2823-3', analyzerCode: 'K', valueText: '4.1' });
    expect(JSON.stringify(read)).not.toMatch(/DOE|1970/);
    expect(payloadFields(JSON.stringify(result))).toMatchObject({ accession: 'A1' });
    expect(payloadFields('not json')).toBeNull();
    expect(payloadFields('42')).toBeNull();
  });
});

describe('instrument cards', () => {
  it('show the connections a listening port refused and the rejected messages refused over the limit, only when there were any', () => {
    const base = { gatewayId: 'g', now: 0, sinks: [], recentResults: [], deadLetters: [], conflicts: [], rejectedCaptures: [] };
    const instruments = [instrument('bs240', { refusedConnections: 7, refusedOverLimit: 1291 }), instrument('chem1')];
    const page = instrumentsSection({ ...base, instruments }).value;
    const [bs240 = '', chem1 = ''] = page.split('<article').slice(1);
    expect(bs240).toMatch(/<dt>Refused connections<\/dt><dd>7<\/dd>/);
    expect(bs240).toMatch(/<dt>Rejected, refused over the limit<\/dt><dd>1291<\/dd>/);
    expect(bs240).toMatch(/card-amber/);
    expect(chem1).not.toMatch(/Refused|refused/);
  });
});

describe('the rejected messages section', () => {
  it('says that only the newest rejected captures are kept, and how many older ones went', () => {
    const base = { gatewayId: 'g', now: 0, instruments: [], sinks: [], recentResults: [], deadLetters: [], conflicts: [], rejectedCaptures: [] };
    expect(queuesSection(base, 'csrf').value).not.toMatch(/are kept/);
    const none = queuesSection({ ...base, rejectedRetention: { keptMb: 100, prunedSinceStart: 0 } }, 'csrf').value;
    expect(none).toMatch(/The newest 100 MB of rejected messages are kept for reprocessing; older ones are pruned\.<\/p>/);
    const rejectedCaptures = [{ id: 7, instrumentId: 'bs240', protocol: 'hl7', receivedAt: 0, reasons: [{ reason: 'not an HL7 message' }] }];
    const some = queuesSection({ ...base, rejectedCaptures, rejectedRetention: { keptMb: 100, prunedSinceStart: 4312 } }, 'csrf').value;
    expect(some).toMatch(/older ones are pruned\. 4312 older ones were pruned since the gateway started\./);
  });
});

describe('an instrument being detected', () => {
  const detection = {
    state: 'found' as const,
    summary: 'ASTM at 9600 8N1: ENQ every 10 s',
    yaml: ['driver: astm', 'transport:', '  kind: serial', '  path: "/dev/labgate/port3"', '  baudRate: 9600', '  dataBits: 8', '  parity: none'],
    note: null,
    trials: [{ setting: '9600 8N1', outcome: 'recognized' as const, why: 'makes sense', at: 0 }],
  };

  it('shows what was found and the exact lines to copy, amber until it is configured', () => {
    const view = instrument('new1', { detection });
    expect(instrumentLamp(view)).toBe('amber');
    const page = instrumentsSection({
      gatewayId: 'g',
      now: 0,
      instruments: [view],
      sinks: [],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
    }).value;
    expect(page).toContain('data-detecting="found"');
    expect(page).toContain('<strong>ASTM at 9600 8N1: ENQ every 10 s</strong>');
    expect(page).toContain(
      '<pre class="yaml" data-yaml>driver: astm\ntransport:\n  kind: serial\n  path: &quot;/dev/labgate/port3&quot;\n  baudRate: 9600\n  dataBits: 8\n  parity: none</pre>',
    );
    expect(page).toContain('nothing is answered');
  });

  it('shows no lines while it is still searching, and red when the device is missing', () => {
    const searching = { ...detection, state: 'searching' as const, summary: 'Listening at 19200 8N1 (setting 2 of 16); nothing recognized yet', yaml: [] };
    const page = instrumentsSection({
      gatewayId: 'g',
      now: 0,
      instruments: [instrument('new1', { detection: searching, state: 'waiting-for-device', reason: 'device not available' })],
      sinks: [],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
    }).value;
    expect(page).not.toContain('data-yaml');
    expect(page).toContain('card-red');
    expect(page).toContain('device not available');
  });
});

describe('codes seen', () => {
  it('lists codes that need a mapping first with the lines to add, values escaped with control characters shown', () => {
    const page = codesSection({
      gatewayId: 'g',
      now: 60_000,
      instruments: [],
      sinks: [],
      recentResults: [],
      deadLetters: [],
      conflicts: [],
      rejectedCaptures: [],
      codesSeen: [
        {
          instrumentId: 'chem1',
          codes: [
            {
              code: 'GLU',
              seen: 3,
              lastValue: '\u202E5.4',
              lastUnit: 'mmol/L',
              lastAt: 0,
              loinc: null,
              problem: 'not mapped',
              yaml: '- { code: "GLU", loinc: "", unit: "mmol/L" }',
            },
            {
              code: 'K<b>',
              seen: 1,
              lastValue: '4.1',
              lastUnit: 'mmol/L',
              lastAt: 0,
              loinc: '2823-3',
              problem: null,
              yaml: '- { code: "K<b>", loinc: "2823-3", unit: "mmol/L" }',
            },
          ],
          total: 2,
          needMapping: 1,
          page: 1,
          pages: 1,
        },
      ],
    }).value;
    expect(page).toContain('<pre class="yaml" data-mapping-lines="chem1">- { code: &quot;GLU&quot;, loinc: &quot;&quot;, unit: &quot;mmol/L&quot; }</pre>');
    expect(page).toContain('\\u202E5.4 mmol/L');
    expect(page).not.toContain('\u202E');
    expect(page).toContain('<code>K&lt;b&gt;</code>');
    expect(page.indexOf('data-code="GLU"')).toBeLessThan(page.indexOf('data-code="K&lt;b&gt;"'));
    expect(page).toContain('<span class="count">1</span> <small>need a mapping</small>');
  });
});

describe('the reload banner', () => {
  const snap = { gatewayId: 'g', now: 60_000, instruments: [], sinks: [], recentResults: [], deadLetters: [], conflicts: [], rejectedCaptures: [] };

  it('lists every problem of a refused file with its path, and turns the page amber', () => {
    const s = {
      ...snap,
      reload: {
        at: 0,
        outcome: 'refused' as const,
        summary: '/etc/labgate/labgate.yaml was not applied (1 problem); the gateway runs on unchanged',
        problems: [{ path: 'instruments[2].mapping[0].loinc', message: 'too small: expected string to have >=1 characters' }],
        waitingForRestart: [],
      },
    };
    const page = reloadSection(s).value;
    expect(page).toContain('data-reload="refused"');
    expect(page).toContain('<li><code>instruments[2].mapping[0].loinc</code>: too small: expected string to have &gt;=1 characters</li>');
    expect(overallLamp(s)).toBe('amber');
  });

  it('says what was applied and what waits for a restart', () => {
    const page = reloadSection({
      ...snap,
      reload: { at: 0, outcome: 'applied', summary: 'chem2 started', problems: [], waitingForRestart: ['sinks.lims'] },
    }).value;
    expect(page).toContain('<strong>Configuration reloaded</strong>');
    expect(page).toContain('chem2 started.');
    expect(page).toContain('<code>sinks.lims</code>');
    expect(reloadSection(snap).value).toBe('');
  });
});

describe('new ports on the status page', () => {
  it('shows a port heard but not configured, with the way to add it once its settings are found', () => {
    const snapshot = { gatewayId: 'g', now: 0, instruments: [], sinks: [], deadLetters: [], conflicts: [], rejectedCaptures: [], recentResults: [] };
    const path = '/dev/serial/by-id/usb-FTDI_"A&B"-if00-port0';
    const page = instrumentsSection({
      ...snapshot,
      newPorts: [
        { path, found: true, summary: 'ASTM at 9600 8N1: ENQ every 10 s', note: null },
        { path: '/dev/serial/by-id/usb-2', found: false, summary: 'Listening at 9600 8N1 (setting 1 of 16); nothing recognized yet', note: null },
      ],
    }).value;
    expect(page).not.toContain('No instruments configured.');
    expect(page).toContain('data-new-port="/dev/serial/by-id/usb-FTDI_&quot;A&amp;B&quot;-if00-port0" data-detecting="found"');
    expect(page).toContain(`href="/configure/add?${new URLSearchParams({ port: path }).toString().replace(/&/g, '&amp;')}">Use these settings</a>`);
    expect(page.match(/Use these settings/g)).toHaveLength(1);
    expect(instrumentsSection(snapshot).value).toContain('No instruments configured.');
  });
});
