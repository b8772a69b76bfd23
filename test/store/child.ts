// Real child processes for the lock and crash tests. They run the compiled store (`npm test` builds it first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiledStore = fileURLToPath(new URL('../../dist/src/store/store.js', import.meta.url));

/** Spawns `node test/store/fixtures/<script> ...args`; fails loudly when the build is missing. */
export function spawnFixture(script: string, args: string[]): ChildProcess & { lines: string[]; stderrText: () => string } {
  if (!existsSync(compiledStore)) throw new Error(`${compiledStore} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [fileURLToPath(new URL(`./fixtures/${script}`, import.meta.url)), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  return Object.assign(child, { lines, stderrText: () => stderr });
}

/** Resolves once the child has printed a line starting with `prefix`; rejects if it exits first. */
export function waitForLine(child: ReturnType<typeof spawnFixture>, prefix: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      const line = child.lines.find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        clearInterval(poll);
        resolve(line);
      } else if (child.exitCode !== null || child.signalCode !== null || Date.now() - started > timeoutMs) {
        clearInterval(poll);
        reject(new Error(`child never printed '${prefix}': ${child.stderrText()}`));
      }
    }, 5);
  });
}

/** SIGKILLs the child and waits until it is gone. */
export function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
