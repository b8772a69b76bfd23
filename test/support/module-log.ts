// Which modules a process loads: `NODE_OPTIONS=--import=dist/test/support/module-log.js` with LABGATE_MODULE_LOG=FILE
// appends the file URL of every module the process imports to FILE, once each, in load order (a module hook, which
// Node runs on its own thread: this file is loaded there too, as the hooks). CommonJS files a package requires
// itself are not seen; the package's entry, imported by labgate, is.
import { appendFileSync } from 'node:fs';
import { register, type InitializeHook, type ResolveHook } from 'node:module';
import { isMainThread } from 'node:worker_threads';

let file: string | undefined;
const seen = new Set<string>();

/** The hooks' start: where to append. */
export const initialize: InitializeHook<{ file: string }> = (data) => {
  file = data.file;
};

/** Notes each module's URL the first time it is resolved. */
export const resolve: ResolveHook = async (specifier, context, next) => {
  const resolved = await next(specifier, context);
  if (file !== undefined && resolved.url.startsWith('file:') && !seen.has(resolved.url)) {
    seen.add(resolved.url);
    appendFileSync(file, `${resolved.url}\n`);
  }
  return resolved;
};

const target = process.env['LABGATE_MODULE_LOG'];
if (isMainThread && target) register(import.meta.url, { data: { file: target } });
