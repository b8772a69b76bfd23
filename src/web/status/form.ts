// Reads a small urlencoded form body. Bounded, because the listener may face a network.
import type { IncomingMessage } from 'node:http';

/** Largest form body accepted; the page's forms are a few hundred bytes. */
export const MAX_FORM_BYTES = 16 * 1024;

/** The parsed form, or null when the body is larger than `max` or not urlencoded (the body is still drained). */
export function readForm(req: IncomingMessage, max = MAX_FORM_BYTES): Promise<URLSearchParams | null> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      if (type !== 'application/x-www-form-urlencoded' || size > max) resolve(null);
      else resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    });
  });
}
