// `npm run bench [name...]`: runs every bench/*.bench.ts (compiled) and prints one JSON line per figure.
// A name is a file's prefix (`lims` runs lims and lims-faults) or a figure (`lims.drain.faults`, any name with a
// dot): a figure runs only the file that declares it in `figures`, and that file only what the figure needs.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchLine, BenchModule } from './line.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const wantedFigures = only.filter((o) => o.includes('.'));
const wantedFiles = only.filter((o) => !o.includes('.'));
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .sort();

const emit = (line: BenchLine): void => {
  process.stdout.write(JSON.stringify(line) + '\n');
};

let failed = false;
let ran = 0;
for (const file of files) {
  const byFile = only.length === 0 || wantedFiles.some((o) => file.startsWith(o));
  if (!byFile && wantedFigures.length === 0) continue;
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  const figures = byFile ? [] : (mod.figures ?? []).filter((f) => wantedFigures.includes(f));
  if (!byFile && figures.length === 0) continue;
  ran++;
  try {
    await mod.run(emit, byFile ? () => true : (figure) => figures.includes(figure));
  } catch (err) {
    failed = true;
    process.stderr.write(`bench ${file} failed: ${(err as Error).stack ?? String(err)}\n`);
  }
}
if (ran === 0) {
  failed = true;
  process.stderr.write(`bench: nothing is called ${only.join(', ')}\n`);
}
process.exitCode = failed ? 1 : 0;
