// A malformed command line is a usage error for every command: exit 2 and the command's help, never a stack trace.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../../bin/labgate.js');

describe('labgate <command> --unknown-option', () => {
  for (const command of ['run', 'demo', 'decode', 'status', 'dead-letter', 'pg-migrate', 'check-config', 'emulate']) {
    it(`${command}: exit 2 with the command's usage`, () => {
      const run = spawnSync(process.execPath, [bin, command, '--no-such-option'], { encoding: 'utf8' });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain("Unknown option '--no-such-option'");
      expect(run.stderr).toContain('Usage: labgate');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    });
  }
});
