// Reading one piece of a delimited field (ASTM fields, HL7 components): the hot path of every decoder, so it walks
// the text with indexOf instead of building the array that split() would.

/** The index-th piece (0-based) of `text` split on `sep`; '' when there are fewer pieces. */
export function piece(text: string, sep: string, index: number): string {
  let from = 0;
  for (let i = 0; i < index; i += 1) {
    const at = text.indexOf(sep, from);
    if (at < 0) return '';
    from = at + 1;
  }
  const end = text.indexOf(sep, from);
  return end < 0 ? text.slice(from) : text.slice(from, end);
}
