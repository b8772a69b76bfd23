// What `check-config` checks on disk: every `*File` of an enabled part exists (the gateway would fail to start, or a
// sink would fail at its first delivery, otherwise), secret files and the configuration are not readable by every
// user of the machine. With the shipped unit, secrets live at /run/credentials/labgate.service/secret_<name>, which
// exists only while the service runs: then the LoadCredential source (/etc/labgate/credentials/<name>) is checked.
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConfigProblem } from './problem.js';

/** What a path is, or the error code of looking at it. */
export type Probe = (path: string) => { kind: 'file' | 'dir' | 'other'; mode: number } | { code: string };

/** The real filesystem. */
export const fsProbe: Probe = (path) => {
  try {
    const s = statSync(path);
    return { kind: s.isFile() ? 'file' : s.isDirectory() ? 'dir' : 'other', mode: s.mode & 0o7777 };
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? 'EIO' };
  }
};

export interface FileCheckOptions {
  /** The directory the unit's LoadCredential=secret: line loads. Default /etc/labgate/credentials. */
  credentialsDir?: string;
  probe?: Probe;
}

/** Problems (exit 2) and warnings (reported, exit 0). */
export interface FileFindings {
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
}

const CREDENTIAL = /^\/run\/credentials\/[^/]+\/secret_(.+)$/;
// CA certificates are public; every other `*File` holds a secret.
const isSecretKey = (key: string): boolean => key.endsWith('File') && !/^(ca|cert)/i.test(key);
const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/** Checks the files a validated configuration names, and the configuration file itself. */
export function fileChecks(config: object, configFile: string, options: FileCheckOptions = {}): FileFindings {
  const probe = options.probe ?? fsProbe;
  const findings: FileFindings = { problems: [], warnings: [] };
  const own = probe(configFile);
  if ('kind' in own && readableByOthers(configFile, own.mode, probe)) {
    findings.warnings.push({
      path: '(file)',
      message: `${configFile} is readable by every user on this machine (mode ${octal(own.mode)}); chmod 640 and group labgate`,
    });
  }
  for (const [path, key, file] of namedFiles(config, '')) {
    const found = locate(file, options.credentialsDir ?? '/etc/labgate/credentials', probe);
    if ('problem' in found) findings.problems.push({ path, message: found.problem });
    else if ('warning' in found) findings.warnings.push({ path, message: found.warning });
    else if (isSecretKey(key) && readableByOthers(found.at, found.mode, probe)) {
      findings.warnings.push({
        path,
        message: `${found.at} holds a secret and is readable by every user on this machine (mode ${octal(found.mode)}); chmod 600`,
      });
    }
  }
  return findings;
}

type Located = { at: string; mode: number } | { problem: string } | { warning: string };

function locate(file: string, credentialsDir: string, probe: Probe): Located {
  const direct = probe(file);
  const credential = CREDENTIAL.exec(file);
  if ('code' in direct && direct.code === 'ENOENT' && credential && 'code' in probe(dirname(file))) {
    // The service is not running: its credentials directory does not exist; look at what it would load.
    const source = join(credentialsDir, credential[1]!);
    const found = locate(source, credentialsDir, probe);
    if ('problem' in found && found.problem.endsWith('does not exist')) return { problem: `${file} does not exist, nor its LoadCredential source ${source}` };
    return found;
  }
  if ('code' in direct) {
    if (direct.code === 'ENOENT') return { problem: `${file} does not exist` };
    if (direct.code === 'EACCES') return { warning: `${file} cannot be checked as this user (permission denied); run check-config as root` };
    return { problem: `${file} cannot be read (${direct.code})` };
  }
  if (direct.kind !== 'file') return { problem: `${file} is not a file` };
  return { at: file, mode: direct.mode };
}

// Readable by others only when every directory above it lets others through, too.
function readableByOthers(file: string, mode: number, probe: Probe): boolean {
  if ((mode & 0o004) === 0) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const d = probe(dir);
    if (!('kind' in d) || (d.mode & 0o001) === 0) return false;
    if (dirname(dir) === dir) return true;
  }
}

/** [config path, key, file] of every `*File` string, skipping disabled sinks and instruments. */
function namedFiles(value: unknown, path: string): [string, string, string][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => namedFiles(v, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  if ((value as { enabled?: unknown }).enabled === false) return [];
  return Object.entries(value).flatMap(([key, v]): [string, string, string][] => {
    const at = path ? `${path}.${key}` : key;
    if (key.endsWith('File') && typeof v === 'string') return [[at, key, v]];
    return namedFiles(v, at);
  });
}
