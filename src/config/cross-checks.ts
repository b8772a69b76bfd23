// Rules that span several keys. They read the raw document defensively (anything may be missing or of the
// wrong type there), so they can run even when the schema has already failed and their problems are
// reported in the same run.
import type { ConfigProblem } from './problem.js';
import { isLoopbackHost } from './loopback.js';
import { twoWayChecks } from './two-way-checks.js';
import { urlCredentialChecks } from './url-credentials.js';

type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v.trim() : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const wildcard = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === '';

/** Every cross-field problem of a raw (unvalidated) configuration document. */
export function crossChecks(input: unknown): ConfigProblem[] {
  if (!isRecord(input)) return [];
  return [
    ...instrumentChecks(input),
    ...listenerChecks(input),
    ...gatewayChecks(input),
    ...sinkChecks(input),
    ...urlCredentialChecks(input),
    ...deliveryChecks(input),
    ...twoWayChecks(input),
  ];
}

function instruments(input: Raw): [number, Raw][] {
  const list = input['instruments'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((v, i): [number, Raw][] => (isRecord(v) ? [[i, v]] : []));
}

function instrumentChecks(input: Raw): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const ids = new Map<string, number>();
  const paths = new Map<string, number>();
  for (const [i, instrument] of instruments(input)) {
    const id = str(instrument['id']);
    if (id !== undefined) {
      const first = ids.get(id);
      if (first !== undefined) problems.push({ path: `instruments[${i}].id`, message: `duplicate id '${id}' (also instruments[${first}])` });
      else ids.set(id, i);
    }
    const transport = instrument['transport'];
    const serial = isRecord(transport) && transport['kind'] === 'serial';
    const detecting = serial && ['baudRate', 'dataBits', 'parity'].some((k) => transport[k] === 'auto');
    if (instrument['driver'] === 'auto' && !detecting) {
      problems.push({
        path: `instruments[${i}].driver`,
        message: 'auto needs a serial transport with baudRate, dataBits or parity auto (detection names the driver)',
      });
    }
    const path = serial ? str(transport['path']) : undefined;
    if (path) {
      const first = paths.get(path);
      if (first !== undefined)
        problems.push({ path: `instruments[${i}].transport.path`, message: `serial port '${path}' is also used by instruments[${first}]` });
      else paths.set(path, i);
    }
    const mapping = instrument['mapping'];
    const codes = new Set<string>();
    if (Array.isArray(mapping)) {
      mapping.forEach((m, j) => {
        const code = isRecord(m) ? str(m['code']) : undefined;
        if (code === undefined) return;
        if (codes.has(code)) problems.push({ path: `instruments[${i}].mapping[${j}].code`, message: `duplicate test code '${code}'` });
        codes.add(code);
      });
    }
  }
  return problems;
}

/** Two listeners on one port (tcp-server instruments, the HTTP server) would fail at start, one of them at random. */
function listenerChecks(input: Raw): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const taken: { host: string; port: number; path: string }[] = [];
  const gateway = input['gateway'];
  const http = isRecord(gateway) && isRecord(gateway['http']) ? gateway['http'] : undefined;
  if (http === undefined || http['port'] === undefined || num(http['port']) !== 0) {
    taken.push({ host: str(http?.['host']) ?? '127.0.0.1', port: num(http?.['port']) ?? 8080, path: 'gateway.http.port' });
  }
  for (const [i, instrument] of instruments(input)) {
    const t = instrument['transport'];
    if (!isRecord(t) || t['kind'] !== 'tcp-server') continue;
    const port = num(t['port']);
    if (port === undefined) continue;
    const host = str(t['host']) ?? '0.0.0.0';
    const path = `instruments[${i}].transport.port`;
    const clash = taken.find((o) => o.port === port && (o.host === host || wildcard(o.host) || wildcard(host)));
    if (clash) problems.push({ path, message: `port ${port} is also used by ${clash.path.replace(/\.port$/, '')}` });
    else taken.push({ host, port, path });
  }
  return problems;
}

function gatewayChecks(input: Raw): ConfigProblem[] {
  const gateway = input['gateway'];
  const http = isRecord(gateway) ? gateway['http'] : undefined;
  if (!isRecord(http)) return [];
  const host = str(http['host']);
  // Off the loopback interface every request needs the token; without one the page would be open to the network.
  if (host !== undefined && !isLoopbackHost(host) && http['tokenFile'] === undefined) {
    return [{ path: 'gateway.http.tokenFile', message: `required when gateway.http.host is not a loopback address (got host '${host}')` }];
  }
  return [];
}

function sinkChecks(input: Raw): ConfigProblem[] {
  const sinks = input['sinks'];
  const postgres = isRecord(sinks) ? sinks['postgres'] : undefined;
  const url = isRecord(postgres) ? str(postgres['url']) : undefined;
  if (url === undefined) return [];
  try {
    if (new URL(url).password) return [{ path: 'sinks.postgres.url', message: 'must not contain a password; put it in the file named by passwordFile' }];
  } catch {
    return [{ path: 'sinks.postgres.url', message: 'expected a URL such as postgres://labgate@db.example:5432/lab' }];
  }
  return [];
}

function deliveryChecks(input: Raw): ConfigProblem[] {
  const delivery = input['delivery'];
  const backoff = isRecord(delivery) ? delivery['backoff'] : undefined;
  if (!isRecord(backoff)) return [];
  const base = num(backoff['baseMs']) ?? 1_000;
  const cap = num(backoff['capMs']) ?? 300_000;
  return base > cap ? [{ path: 'delivery.backoff.capMs', message: `must be at least baseMs (${base}), got ${cap}` }] : [];
}
