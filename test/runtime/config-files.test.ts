// `check-config` against what a careless or hostile setup does: secret files that are missing or readable by every
// user, a configuration readable by everyone, credentials inside HTTP sink URLs, a YAML alias bomb, and hosts on which
// check-config and run could disagree about loopback.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileChecks, type Probe } from '../../src/config/file-checks.js';
import { parseConfigText } from '../../src/config/load.js';
import { isLoopbackHost, StatusAuth } from '../../src/web/status/auth.js';
import { runCli } from '../fixtures/cli.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labgate-files-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  return dir;
}

const checkConfig = (...args: string[]): ReturnType<typeof runCli> => runCli(['check-config', ...args]);

function write(dir: string, name: string, text: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** A configuration with a PostgreSQL sink whose password is `passwordFile`. */
function withPassword(passwordFile: string, extra = ''): string {
  return `gateway: {id: gw1}\nsinks:\n  postgres: {url: "postgres://labgate@db:5432/lab", passwordFile: "${passwordFile}", tls: {mode: disable}}\n${extra}`;
}

describe('check-config and the files a configuration names', () => {
  it('fails on a secret file that does not exist', async () => {
    const dir = scratch();
    const config = write(dir, 'labgate.yaml', withPassword(join(dir, 'missing-password')), 0o640);
    const r = await checkConfig('--config', config);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`  sinks.postgres.passwordFile: ${join(dir, 'missing-password')} does not exist`);
  });

  it('warns about a secret file and a configuration readable by every user, and not when a directory hides them', async () => {
    const dir = scratch();
    const open = write(dir, 'pg-password', 'pw', 0o644);
    const config = write(dir, 'labgate.yaml', withPassword(open), 0o644);
    const r = await checkConfig('--config', config);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`  (file): ${config} is readable by every user on this machine (mode 0644); chmod 640 and group labgate`);
    expect(r.err).toContain(`  sinks.postgres.passwordFile: ${open} holds a secret and is readable by every user on this machine (mode 0644); chmod 600`);
    const locked = join(dir, 'credentials');
    mkdirSync(locked, { mode: 0o700 });
    chmodSync(locked, 0o700);
    const hidden = write(locked, 'pg-password', 'pw', 0o644);
    const quiet = await checkConfig('--config', write(dir, 'quiet.yaml', withPassword(hidden), 0o640));
    expect(quiet).toMatchObject({ code: 0, err: '' });
  });

  it('skips the files of a disabled sink, and --schema-only skips them all', async () => {
    const dir = scratch();
    const disabled = `gateway: {id: gw1}\nsinks:\n  postgres: {enabled: false, url: "postgres://labgate@db/lab", passwordFile: /nonexistent/pw}\n`;
    expect((await checkConfig('--config', write(dir, 'a.yaml', disabled, 0o640))).code).toBe(0);
    expect((await checkConfig('--schema-only', '--config', write(dir, 'b.yaml', withPassword('/nonexistent/pw'), 0o640))).code).toBe(0);
  });

  it('looks for a systemd credential in its LoadCredential source while the service is not running', () => {
    const files: Record<string, { kind: 'file' | 'dir'; mode: number }> = {
      '/': { kind: 'dir', mode: 0o755 },
      '/etc': { kind: 'dir', mode: 0o755 },
      '/etc/labgate': { kind: 'dir', mode: 0o750 },
      '/etc/labgate/labgate.yaml': { kind: 'file', mode: 0o640 },
      '/etc/labgate/credentials': { kind: 'dir', mode: 0o700 },
      '/etc/labgate/credentials/pg-password': { kind: 'file', mode: 0o600 },
    };
    const probe: Probe = (path) => files[path] ?? { code: 'ENOENT' };
    const config = (name: string): object => ({ sinks: { postgres: { passwordFile: `/run/credentials/labgate.service/secret_${name}` } } });
    expect(fileChecks(config('pg-password'), '/etc/labgate/labgate.yaml', { probe })).toEqual({ problems: [], warnings: [] });
    expect(fileChecks(config('lims-token'), '/etc/labgate/labgate.yaml', { probe }).problems).toEqual([
      {
        path: 'sinks.postgres.passwordFile',
        message: '/run/credentials/labgate.service/secret_lims-token does not exist, nor its LoadCredential source /etc/labgate/credentials/lims-token',
      },
    ]);
    // As the service user the source directory cannot be read: a warning, not a failure.
    const denied: Probe = (path) => (path.startsWith('/etc/labgate/credentials/') ? { code: 'EACCES' } : probe(path));
    expect(fileChecks(config('pg-password'), '/etc/labgate/labgate.yaml', { probe: denied }).warnings).toEqual([
      {
        path: 'sinks.postgres.passwordFile',
        message: '/etc/labgate/credentials/pg-password cannot be checked as this user (permission denied); run check-config as root',
      },
    ]);
  });

  it('refuses credentials inside the URLs of HTTP sinks', () => {
    const text = `gateway: {id: gw1}
sinks:
  lims:
    baseUrl: "https://labgate:s3cret@lims.lab.example/api"
    auth: {kind: oauth2, tokenUrl: "https://lims.lab.example/oauth/token?client_secret=abc", clientId: gw1, clientSecretFile: /x}
`;
    const result = parseConfigText(text);
    expect(result.kind === 'invalid' ? result.problems : []).toEqual([
      { path: 'sinks.lims.auth.tokenUrl', message: "must not carry a credential in its query (client_secret); use the auth section's secret file" },
      {
        path: 'sinks.lims.baseUrl',
        message: 'must not contain a user or password; put the secret in the file its auth section names (tokenFile, clientSecretFile)',
      },
    ]);
  });

  it('reports a YAML alias bomb as a problem line with exit 2, not a stack trace', async () => {
    const dir = scratch();
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g', 'h'].entries()) {
      const prev = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const r = await checkConfig('--config', write(dir, 'bomb.yaml', `${levels.join('\n')}\ngateway: {id: gw1}\n`, 0o640));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^.*bomb\.yaml: 1 problem\n {2}\(yaml\): refused: excessive alias count indicates a resource exhaustion attack \(more than 100 alias expansions\)\n$/,
    );
  });
});

describe('loopback: check-config and run agree', () => {
  it('requires a token file exactly where the listener would demand one', () => {
    for (const host of [
      '127.0.0.1',
      '127.9.9.9',
      '::1',
      '[::1]',
      'LOCALHOST',
      'lab.localhost',
      '::ffff:127.0.0.1',
      '127.evil.example',
      '127.0.0.1.nip.io',
      '0.0.0.0',
      '10.0.0.5',
    ]) {
      const result = parseConfigText(`gateway: {id: gw1, http: {host: "${host}"}}\n`);
      const checkConfigDemands = result.kind === 'invalid' && result.problems.some((p) => p.path === 'gateway.http.tokenFile');
      let runDemands = false;
      try {
        // gateway/web.ts: requireToken is !isLoopbackHost(http.host), and StatusAuth refuses to start without a token.
        new StatusAuth({ requireToken: !isLoopbackHost(host), now: () => 0 });
      } catch {
        runDemands = true;
      }
      expect(checkConfigDemands, host).toBe(runDemands);
    }
  });
});
