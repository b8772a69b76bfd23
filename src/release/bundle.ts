// `npm run build`, after tsc: the installed command as a few files instead of some four hundred. After a power cut the
// analyzers wait while `labgate run` loads every module it needs before its first ACK, and Node's ES module loader
// spends most of that start resolving, reading, compiling and linking them one at a time (runtime.cold-start: 0.51-0.55
// -> 0.37-0.38 s on this 2-core VM). dist/bundle/cli.js holds our own code and the pure-JS libraries every start
// reads (zod, yaml), split at each dynamic import, so what a configuration does not use (a protocol, FHIR, the
// status pages, the sinks) is still read only when used. Packages with native code or files they find at run time
// (better-sqlite3, serialport, pino's worker, pg, undici, prom-client) stay in node_modules, loaded as before.
// A build-time tool: rolldown is a devDependency, and nothing the gateway runs imports this file.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

/** Libraries read at every start whose modules are plain JavaScript, self-contained: bundled with our code. */
const BUNDLED_PACKAGES = ['zod', 'yaml'] as const;

/** dist/bundle/modules.json: each file of the bundle and the compiled modules in it, relative to dist/. */
const MODULES_FILE = 'modules.json';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * True for an import the bundle leaves to Node: a built-in, or a package labgate depends on that is not in
 * BUNDLED_PACKAGES (the test servers' development packages included: what the build machine has, not the Pi).
 * Anything else, such as the bundler's own helpers, goes into the bundle.
 */
function staysExternal(id: string, dependencies: readonly string[]): boolean {
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  const name = id.startsWith('@') ? id.split('/').slice(0, 2).join('/') : id.split('/')[0]!;
  return dependencies.includes(name) && !(BUNDLED_PACKAGES as readonly string[]).includes(name);
}

/** Writes dist/bundle/ from the compiled dist/src/cli.js. */
async function writeBundle(distDir: string): Promise<void> {
  const out = join(distDir, 'bundle');
  rmSync(out, { recursive: true, force: true });
  const manifest = JSON.parse(readFileSync(join(distDir, '..', 'package.json'), 'utf8')) as Record<'dependencies' | 'devDependencies', Record<string, string>>;
  const dependencies = [...Object.keys(manifest.dependencies), ...Object.keys(manifest.devDependencies)];
  const bundle = await rolldown({
    input: { cli: join(distDir, 'src', 'cli.js') },
    external: (id) => staysExternal(id, dependencies),
    platform: 'node',
    // tsc wrote the code for this Node already: the bundler lowers only what it must (a tagged template's escapes).
    transform: { target: 'node20' },
    logLevel: 'warn',
  });
  try {
    const { output } = await bundle.write({ dir: out, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' });
    // Which compiled modules each file holds (paths relative to dist/), for whoever asks what a process loaded.
    const modules: Record<string, string[]> = {};
    for (const file of output) if (file.type === 'chunk') modules[file.fileName] = file.moduleIds.map((id) => relative(distDir, id));
    writeFileSync(join(out, MODULES_FILE), JSON.stringify(modules, null, 1) + '\n');
  } finally {
    await bundle.close();
  }
}

await writeBundle(dist);
