// How a configuration file (the main file, the instruments file) is read, at start, by check-config and on every
// reload: opened without blocking, refused unless it is a regular file of at most MAX_CONFIG_BYTES, and only then
// read. A FIFO or a device put in its place must not hang the gateway, and a file of hundreds of megabytes must be
// refused at once rather than read and parsed. The reload reads it in libuv's thread pool, off the event loop the
// analyzers' ACKs run on; start and check-config read it synchronously (nothing else runs yet).
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/** The largest configuration file read: sixteen instruments with long mappings take a few hundred kB. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The file's text, or why it was not read (`code`: the system's error code, or ECONFIGFILE for a file refused by the rule). */
export type ConfigFileRead = { kind: 'text'; text: string } | { kind: 'unreadable'; code: string; detail: string };

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** Reads a configuration file off the event loop. */
export async function readConfigFile(path: string): Promise<ConfigFileRead> {
  let handle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    return failed(err);
  }
  try {
    const refused = refusal(await handle.stat());
    if (refused) return unreadable(refused);
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return textOf(buffer, length);
  } catch (err) {
    return failed(err);
  } finally {
    await handle.close();
  }
}

/** Reads a configuration file synchronously (start, check-config), by the same rule. */
export function readConfigFileSync(path: string): ConfigFileRead {
  let fd: number;
  try {
    fd = openSync(path, FLAGS);
  } catch (err) {
    return failed(err);
  }
  try {
    const refused = refusal(fstatSync(fd));
    if (refused) return unreadable(refused);
    const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return textOf(buffer, length);
  } catch (err) {
    return failed(err);
  } finally {
    closeSync(fd);
  }
}

function refusal(stats: Stats): string | null {
  if (!stats.isFile()) return `not a regular file (${kindOf(stats)})`;
  return stats.size > MAX_CONFIG_BYTES ? `${stats.size} bytes, over the ${MAX_CONFIG_BYTES}-byte limit of a configuration file` : null;
}

// The file may have grown between its stat and its read: what was read past the limit refuses it too.
function textOf(buffer: Buffer, length: number): ConfigFileRead {
  if (length > MAX_CONFIG_BYTES) return unreadable(`over the ${MAX_CONFIG_BYTES}-byte limit of a configuration file`);
  return { kind: 'text', text: buffer.toString('utf8', 0, length) };
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return stats.isSocket() ? 'a socket' : 'not a file';
}

function unreadable(detail: string): ConfigFileRead {
  return { kind: 'unreadable', code: 'ECONFIGFILE', detail };
}

function failed(err: unknown): ConfigFileRead {
  const code = (err as NodeJS.ErrnoException).code ?? String(err);
  return { kind: 'unreadable', code, detail: code };
}
