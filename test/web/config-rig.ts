// The configuration pages over real parts without a child process: the two files in a temporary directory, a real
// store, the real reloader (its apply swaps the running configuration, as the gateway's does after the instruments'
// part), the gateway's ConfigSource and the status page's server, guard and auth on 127.0.0.1 port 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfiguration } from '../../src/config/load.js';
import type { ReloadPlan } from '../../src/config/reload-plan.js';
import type { Config } from '../../src/config/schema.js';
import { bindInstruments } from '../../src/driver-registry.js';
import { gatewayConfigSource } from '../../src/gateway/config-source.js';
import { ConfigReloader } from '../../src/gateway/reload.js';
import { silentLog } from '../../src/log.js';
import { openStore, type Store } from '../../src/store/store.js';
import { WebServer } from '../../src/web/server.js';
import { configRoutes } from '../../src/web/config/routes.js';
import type { NewPortView } from '../../src/web/config/source.js';
import { statusPage } from '../../src/web/status/routes.js';
import { FakeStatusSource } from './fake-source.js';
import { call, csrfOf, post, sessionCookie, type Reply } from './harness.js';

export const ADMIN_TOKEN = 'admin-token-for-the-config-tests-5e1';

/** A browser as the tests play it: its cookies and the CSRF token of its session. */
export interface Visitor {
  cookie: string;
  csrf: string;
}

export interface ConfigRig {
  port: number;
  dir: string;
  file: string;
  instrumentsFile: string;
  store: Store;
  running(): Config;
  plans: ReloadPlan[];
  newPorts: NewPortView[];
  /** A new browser session (not unlocked). */
  visit(): Promise<Visitor>;
  /** Unlocks a session as `name`; returns it with the admin cookie added. */
  unlock(v: Visitor, name?: string): Promise<Visitor>;
  /** POSTs a configuration form as this browser. */
  submit(v: Visitor, path: string, fields: Record<string, string>): Promise<Reply>;
  get(v: Visitor, path: string): Promise<Reply>;
  /** Audit entries of configuration changes, oldest first. */
  audit(): { actor: string; action: string; subject: string | null; detail: Record<string, unknown> }[];
  stop(): Promise<void>;
}

const MAIN = (dir: string): string => `
gateway: {id: gw-config, dataDir: ${JSON.stringify(join(dir, 'data'))}, http: {port: 8099}}
instruments:
  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/chem1}, mapping: [{code: GLU, loinc: 2345-7, unit: mg/dL}, {code: NA, loinc: 2951-2, unit: mmol/L}]}
`;

/** Starts the rig; the main file holds chem1, the instruments file does not exist yet. */
export async function configRig(adminToken: string | null = ADMIN_TOKEN): Promise<ConfigRig> {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-config-pages-'));
  const file = join(dir, 'labgate.yaml');
  writeFileSync(file, MAIN(dir));
  const first = readConfiguration(file);
  if (first.result.kind !== 'ok') throw new Error(`bad fixture: ${JSON.stringify(first.result.problems)}`);
  let running = first.result.config;
  const now = (): number => Date.now();
  const store = openStore({ dataDir: join(dir, 'data'), sinks: [], now });
  const plans: ReloadPlan[] = [];
  const reloader = new ConfigReloader({
    file,
    current: () => running,
    apply: async (plan, next) => void (plans.push(plan), (running = next)),
    now,
    log: silentLog,
  });
  const newPorts: NewPortView[] = [];
  const source = gatewayConfigSource({
    file,
    running: () => running,
    bound: () => {
      const b = bindInstruments(running);
      return b.kind === 'ok' ? b.instruments : new Map();
    },
    instruments: () => [],
    newPorts: () => newPorts,
    store,
    reload: () => reloader.reload(),
    delivered: () => {},
    gatewayZone: () => 'Europe/Vienna',
    now,
    log: silentLog,
  });
  const page = statusPage(new FakeStatusSource(now), {
    requireToken: false,
    ...(adminToken ? { adminToken: () => adminToken } : {}),
    now,
    snapshotCacheMs: 0,
    log: silentLog,
  });
  const server = new WebServer({
    host: '127.0.0.1',
    port: 0,
    log: silentLog,
    guard: page.guard,
    routes: [...page.routes, ...configRoutes({ source, auth: page.auth, gatewayId: 'gw-config', now, log: silentLog })],
  });
  const { port } = await server.start();
  const cookieOf = (reply: Reply, name: string): string | undefined => reply.headers['set-cookie']?.find((c) => c.startsWith(`${name}=`))?.split(';')[0];
  return {
    port,
    dir,
    file,
    instrumentsFile: join(dir, 'data', 'instruments.yaml'),
    store,
    running: () => running,
    plans,
    newPorts,
    visit: async () => {
      const reply = await call(port, 'GET', '/configure');
      const cookie = sessionCookie(reply)!;
      const body = (await call(port, 'GET', '/configure', { cookie })).body;
      // Without an admin token the page has no form, so no CSRF token to take.
      return { cookie, csrf: body.includes('name="csrf"') ? csrfOf(body) : '' };
    },
    unlock: async (v, name = 'Ana Weber') => {
      const reply = await post(port, '/configure/unlock', v.cookie, { csrf: v.csrf, token: ADMIN_TOKEN, name });
      if (reply.status !== 303) throw new Error(`unlock answered ${reply.status}: ${reply.body.slice(0, 300)}`);
      return { ...v, cookie: `${v.cookie}; ${cookieOf(reply, 'labgate_admin')!}` };
    },
    submit: (v, path, fields) => post(port, path, v.cookie, { csrf: v.csrf, ...fields }),
    get: (v, path) => call(port, 'GET', path, { cookie: v.cookie }),
    audit: () =>
      (
        store.db.prepare("SELECT actor, action, subject, detail FROM audit WHERE action GLOB 'config-*' ORDER BY id").all() as {
          actor: string;
          action: string;
          subject: string | null;
          detail: string;
        }[]
      ).map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> })),
    stop: async () => {
      await server.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The version a page's forms carry (`name="base" value="..."`). */
export function baseOf(html: string): string {
  const m = /name="base" value="([^"]+)"/.exec(html) ?? /data-version="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error('no base version in the page');
  return m[1];
}

/** Adds chem2 (ASTM records without the link layer on /dev/chem2) through the forms and journals one message of its four codes, rejected. */
export async function withChem2(r: ConfigRig): Promise<Visitor> {
  const admin = await r.unlock(await r.visit());
  const base = baseOf((await r.get(admin, '/configure')).body);
  const add = {
    change: 'add',
    base,
    kind: 'serial',
    id: 'chem2',
    driver: 'astm',
    timezone: 'UTC',
    path: '/dev/chem2',
    baudRate: '9600',
    dataBits: '8',
    parity: 'none',
    options: 'framing: none',
  };
  const applied = await r.submit(admin, '/configure/apply', add);
  if (applied.status !== 200) throw new Error(`adding chem2 answered ${applied.status}: ${applied.body.slice(0, 300)}`);
  const raw = Buffer.from(
    [
      'H|\\^&|||Emu^1|||||||P|1|20260701120000',
      'P|1',
      'O|1|ACC-1',
      'R|1|^^^GLU|5.4|mmol/L||N||F||||20260701120000',
      'R|2|^^^NA|140|mmol/L||N||F||||20260701120000',
      'R|3|^^^K|4.1|mmol/L||N||F||||20260701120000',
      'R|4|^^^CREA|88|umol/L||N||F||||20260701120000',
      'L|1|N',
      '',
    ].join('\r'),
    'latin1',
  );
  const bound = bindInstruments(r.running());
  const chem2 = bound.kind === 'ok' ? bound.instruments.get('chem2')! : undefined;
  const decoded = chem2!.driver.decodeCapture(raw, chem2!.profile);
  r.store.ingest({
    capture: { instrumentId: 'chem2', protocol: 'astm', receivedAt: Date.now(), raw },
    results: decoded.flatMap((d) => d.results),
    rejections: decoded.flatMap((d) => d.rejections),
  });
  return admin;
}
