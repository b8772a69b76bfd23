// Where the next occurrence of a byte is in a chunk, each byte value searched again only once passed: finding
// the gaps between a chunk's frames (and the line ends in them) costs one pass over it, however many frames.

/** Searches one chunk, remembering where each byte value was last found. */
export class NextByte {
  /** Index of the next occurrence found so far, per byte value (only the few control bytes are ever asked). */
  private readonly found = new Map<number, number>();

  constructor(private readonly data: Buffer) {}

  /** The index of the next `byte` at or after `pos`, or the chunk's length if there is none. */
  at(byte: number, pos: number): number {
    const known = this.found.get(byte);
    if (known !== undefined && known >= pos) return known;
    const index = this.data.indexOf(byte, pos);
    const next = index < 0 ? this.data.length : index;
    this.found.set(byte, next);
    return next;
  }

  /** How many `byte`s lie in [from, to). */
  count(byte: number, from: number, to: number): number {
    let n = 0;
    for (let i = this.at(byte, from); i < to; i = this.at(byte, i + 1)) n++;
    return n;
  }
}
