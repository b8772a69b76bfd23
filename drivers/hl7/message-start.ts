// Whether a block's payload is an HL7 message at all: one begins with its header segment (MSH, or a batch's FHS/BHS;
// HL7 v2.5.1 Chapter 2, 2.5 and 2.10.3). A block that does not is noise, a port scanner or another protocol, and the
// runner only counts and samples it; a message with an MSH, however broken after it, is journaled every time.

const HEADERS = ['MSH', 'FHS', 'BHS'];

/** True when the payload, after leading blanks, NULs and a UTF-8 byte-order mark, starts with a header segment. */
export function startsLikeMessage(raw: Buffer): boolean {
  let i = 0;
  if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) i = 3;
  while (i < raw.length && (raw[i] === 0x00 || raw[i] === 0x20 || (raw[i]! >= 0x09 && raw[i]! <= 0x0d))) i += 1;
  return HEADERS.includes(raw.toString('latin1', i, i + 3));
}
