// Where the next occurrence of a byte is in a chunk, each byte value searched again only once passed: finding
// the gaps between a chunk's frames (and the line ends in them) costs one pass over it, however many frames.

/** The index of the next `byte` at or after `pos` (the chunk's length if none), and a count of them in a range. */
export interface Next {
  (byte: number, pos: number): number;
  count(byte: number, from: number, to: number): number;
}

/** A cached search over `data`, for one chunk's lifetime. */
export function nextIn(data: Buffer): Next {
  const found = new Map<number, number>();
  const next = (byte: number, pos: number): number => {
    const known = found.get(byte);
    if (known !== undefined && known >= pos) return known;
    const at = data.indexOf(byte, pos);
    const index = at < 0 ? data.length : at;
    found.set(byte, index);
    return index;
  };
  const count = (byte: number, from: number, to: number): number => {
    let n = 0;
    for (let i = next(byte, from); i < to; i = next(byte, i + 1)) n++;
    return n;
  };
  return Object.assign(next, { count });
}
