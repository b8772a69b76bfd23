// Fixtures are written with mnemonics and turned into bytes by this one helper:
// '<STX>1H|\\^&<CR><ETX><CS><CR><LF>' — `<CS>` is replaced by the frame's real checksum (LIS01-A2 8.3.3),
// any literal two hex digits are kept as written.
import { checksum } from '../../drivers/astm/frame.js';

const codes: Record<string, number> = {
  STX: 0x02,
  ETX: 0x03,
  EOT: 0x04,
  ENQ: 0x05,
  ACK: 0x06,
  LF: 0x0a,
  CR: 0x0d,
  NAK: 0x15,
  ETB: 0x17,
};

/** Mnemonic text → raw bytes (Latin-1 for the printable part, or UTF-8 when asked). */
export function bytes(mnemonic: string, charset: 'latin1' | 'utf8' = 'latin1'): Buffer {
  const parts: number[] = [];
  let frameStart = -1;
  for (const token of mnemonic.split(/(<[A-Z]{2,3}>)/).filter(Boolean)) {
    const name = /^<([A-Z]{2,3})>$/.exec(token)?.[1];
    if (name === 'CS') {
      parts.push(...Buffer.from(checksum(Uint8Array.from(parts.slice(frameStart + 1))), 'latin1'));
    } else if (name !== undefined && codes[name] !== undefined) {
      if (codes[name] === 0x02) frameStart = parts.length;
      parts.push(codes[name]);
    } else {
      parts.push(...Buffer.from(token, charset));
    }
  }
  return Buffer.from(parts);
}

/** Raw bytes → mnemonic text, for readable assertions. */
export function mnemonic(data: Buffer): string {
  const names = new Map(Object.entries(codes).map(([k, v]) => [v, `<${k}>`]));
  return [...data].map((b) => names.get(b) ?? String.fromCharCode(b)).join('');
}

/** One frame in mnemonics with its real checksum and CR LF. */
export function frame(frameNumber: number, text: string, final = true): string {
  return `<STX>${frameNumber % 8}${text}${final ? '<ETX>' : '<ETB>'}<CS><CR><LF>`;
}
