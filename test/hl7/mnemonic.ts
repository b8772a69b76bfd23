// Test fixtures are written with mnemonics (STYLE.md): '<VT>MSH|^~\\&|...<CR><FS><CR>' becomes bytes.
const names: Record<string, number> = { NUL: 0x00, STX: 0x02, ETX: 0x03, ACK: 0x06, LF: 0x0a, VT: 0x0b, CR: 0x0d, NAK: 0x15, FS: 0x1c };

/** Turns `<VT>`, `<CR>`, `<FS>` ... into their bytes; everything else is Latin-1. */
export function bytes(text: string): Buffer {
  return Buffer.from(
    text.replace(/<([A-Z]{2,3})>/g, (m, n: string) => (names[n] === undefined ? m : String.fromCharCode(names[n]))),
    'latin1',
  );
}

/** Segments joined by CR, as HL7 2.5.2 writes them. */
export function segments(...lines: string[]): string {
  return lines.join('\r') + '\r';
}

/** One MLLP block around a payload. */
export function mllp(payload: string): Buffer {
  return Buffer.concat([bytes('<VT>'), Buffer.from(payload, 'latin1'), bytes('<FS><CR>')]);
}

/** Bytes back into mnemonics, for readable assertions. */
export function mnemonics(data: Buffer): string {
  const byCode = new Map(Object.entries(names).map(([k, v]) => [v, k]));
  return [...data].map((b) => (byCode.has(b) ? `<${byCode.get(b)}>` : String.fromCharCode(b))).join('');
}
