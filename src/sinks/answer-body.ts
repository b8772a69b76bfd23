// Every body labgate reads from an upstream server (the LIMS and its token endpoint, the FHIR server) is read up to
// a cap: a broken proxy or a runaway query answering hundreds of megabytes must not take the gateway's memory, nor
// its event loop, with it. Reading stops at the cap and the connection is dropped; the exchange then fails with
// 'too-large', which each sink or lookup reads as its own error.

/** A cap on answers nobody configured: far above any answer the contracts describe, far below the Pi's memory. */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The body as text, or the cap it went past (nothing of it is kept). */
export type AnswerBody = { kind: 'body'; text: string } | { kind: 'too-large'; maxBytes: number };

/** A response body as undici hands it: chunks, and a way to stop reading. */
export interface BodyStream extends AsyncIterable<Uint8Array> {
  destroy(): unknown;
}

/** Reads `body` as UTF-8 up to `maxBytes`; a declared Content-Length over the cap is refused before any byte is read. */
export async function readAnswerBody(body: BodyStream, contentLength: string | undefined, maxBytes: number): Promise<AnswerBody> {
  if (contentLength !== undefined && Number(contentLength) > maxBytes) return tooLarge(body, maxBytes);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > maxBytes) return tooLarge(body, maxBytes);
    chunks.push(chunk);
  }
  return { kind: 'body', text: Buffer.concat(chunks, bytes).toString('utf8') };
}

function tooLarge(body: BodyStream, maxBytes: number): AnswerBody {
  body.destroy();
  return { kind: 'too-large', maxBytes };
}
