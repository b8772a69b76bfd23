import { describe, expect, it } from 'vitest';
import { readUnitRuntime, unitRuntime } from '../../bench/soak/unit-runtime.js';

describe("the soak's gateway runs as the systemd unit runs it", () => {
  it("takes node's options from ExecStart and the variables from every Environment= line", () => {
    const unit = [
      '[Service]',
      '# ExecStart=/usr/bin/node --commented-out x.js',
      'ExecStart=/usr/bin/node --max-semi-space-size=4 --stack-size=900 /opt/labgate/current/bin/labgate.js run --config /etc/x.yaml',
      'Environment=NODE_ENV=production',
      'Environment=MALLOC_ARENA_MAX=2 "GREETING=hello world"',
      'Environment=NODE_ENV=staging',
    ].join('\n');
    expect(unitRuntime(unit)).toEqual({
      nodeArgs: ['--max-semi-space-size=4', '--stack-size=900'],
      env: { NODE_ENV: 'staging', MALLOC_ARENA_MAX: '2', GREETING: 'hello world' },
    });
  });

  it('has no options when the script follows node at once, and refuses a unit that does not run node', () => {
    expect(unitRuntime('ExecStart=/usr/bin/node /opt/x.js run').nodeArgs).toEqual([]);
    expect(() => unitRuntime('ExecStart=/usr/bin/python3 /opt/x.py')).toThrow(/does not run node/);
    expect(() => unitRuntime('[Service]\nEnvironment=A=1')).toThrow(/no ExecStart/);
  });

  it("reads this checkout's unit: node on labgate.js, whatever options it gives", () => {
    const runtime = readUnitRuntime();
    expect(runtime.env.NODE_ENV).toBe('production');
    expect(runtime.nodeArgs.every((a) => a.startsWith('--'))).toBe(true);
  });
});
