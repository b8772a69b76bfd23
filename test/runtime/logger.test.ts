import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Log } from '../../src/log.js';
import { createLogger, instrumentLogger, sinkLogger, STDOUT_BUFFER_BYTES } from '../../src/logger.js';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[]; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      cb();
    },
  });
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('logger', () => {
  it('never writes a secret or a patient name, wherever it is nested', () => {
    const out = capture();
    const root = createLogger({ level: 'debug', gateway: 'gw1', destination: out.stream });
    const chem: Log = instrumentLogger(root, 'chem1');
    const lims = sinkLogger(root, 'lims');
    chem.info({ patientName: 'DOE^JANE', accession: 'A123' }, 'message committed');
    chem.debug({ message: { patient: { name: 'DOE^JANE', birthDate: '19700101' } } }, 'decoded');
    chem.warn({ capture: { raw: 'P|1||PID-77||DOE^JANE' } }, 'rejected');
    lims.info({ request: { headers: { authorization: 'Bearer s3cr3t-token', 'set-cookie': 'sid=s3cr3t-cookie' } } }, 'PUT');
    lims.error({ auth: { clientSecret: 's3cr3t-client', password: 's3cr3t-pass' }, token: 's3cr3t-top' }, 'token refresh failed');
    const text = out.text();
    for (const forbidden of ['DOE^JANE', '19700101', 'PID-77', 's3cr3t']) expect(text).not.toContain(forbidden);
    const lines = out.lines();
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatchObject({ gateway: 'gw1', instrument: 'chem1', accession: 'A123', patientName: '[redacted]', msg: 'message committed' });
    expect(lines[3]).toMatchObject({ sink: 'lims', request: { headers: { authorization: '[redacted]' } } });
    expect(typeof lines[0]?.['time']).toBe('string');
  });

  it('honours the level', () => {
    const out = capture();
    const root = createLogger({ level: 'warn', destination: out.stream });
    root.info('hidden');
    root.warn('shown');
    expect(out.lines().map((l) => l['msg'])).toEqual(['shown']);
  });
});

describe('logger on a stdout nobody reads', () => {
  it('holds at most its buffer of lines in memory and drops the rest', async () => {
    const child = fileURLToPath(new URL('../../dist/test/support/stalled-stdout-child.js', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'labgate-stalled-stdout-'));
    const file = join(dir, 'memory.json');
    // stdout is a pipe this test never reads: it fills after 64 KiB and every later write waits.
    const p = spawn(process.execPath, [child, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await until(() => existsSync(file), 60_000);
      const memory = JSON.parse(readFileSync(file, 'utf8')) as { heapUsedMb: number; externalMb: number };
      // About 100 MB of lines were logged; a buffer of STDOUT_BUFFER_BYTES and the process's own few MB stay.
      expect(memory.heapUsedMb + memory.externalMb).toBeLessThan(STDOUT_BUFFER_BYTES / 2 ** 20 + 24);
    } finally {
      p.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
