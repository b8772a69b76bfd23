// `npm run bench [name...]`: runs every bench/*.bench.ts (compiled) and prints one JSON line per figure.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchLine, BenchModule } from './line.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

const emit = (line: BenchLine): void => {
  process.stdout.write(JSON.stringify(line) + '\n');
};

let failed = false;
for (const file of files) {
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  try {
    await mod.run(emit);
  } catch (err) {
    failed = true;
    process.stderr.write(`bench ${file} failed: ${(err as Error).stack ?? String(err)}\n`);
  }
}
process.exitCode = failed ? 1 : 0;
