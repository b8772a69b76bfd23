// Whether the analyzer accepted a message labgate sent it (an order answer, a work order): its acknowledgment's MSA-1
// is AA or CA (Table 0008) and MSA-2 names the message's MSH-10. Anything else is not an acceptance.
import type { MessageHeader } from './header.js';
import { rawField, type Hl7Message } from './parse.js';

/** True when `message` (of one of `types`, e.g. ACK or ORL) accepts the message whose MSH-10 was `controlId`. */
export function acceptsMessage(message: Hl7Message, header: MessageHeader, types: readonly string[], controlId: string): boolean {
  const ack = acknowledgmentOf(message, header, types);
  return ack !== undefined && ack.accepted && ack.controlId === controlId;
}

/** What an acknowledgment (of one of `types`) says: the MSH-10 it answers (MSA-2) and whether it accepts (AA, CA). */
export function acknowledgmentOf(
  message: Hl7Message,
  header: MessageHeader,
  types: readonly string[],
): { controlId: string; accepted: boolean; code: string } | undefined {
  if (!types.includes(header.messageType)) return undefined;
  const msa = message.segments.find((s) => s.id === 'MSA');
  if (msa === undefined) return undefined;
  const d = message.delimiters;
  const first = (n: number): string => (rawField(msa, n).split(d.component)[0] ?? '').trim();
  const code = first(1).toUpperCase();
  return { controlId: first(2), accepted: ['AA', 'CA'].includes(code), code };
}
