// A persistent append-only list. Appending returns a new list that shares the old one, so a state holding a
// message's frames grows by one node per frame instead of copying its list: linear, and still pure (a state
// handed to step() twice gives the same answer twice).

/** A list, newest item first; null is empty. */
export type Chain<T> = { readonly item: T; readonly before: Chain<T> } | null;

/** The list with `item` appended. */
export function append<T>(chain: Chain<T>, item: T): Chain<T> {
  return { item, before: chain };
}

/** The items, oldest first. */
export function items<T>(chain: Chain<T>): T[] {
  const out: T[] = [];
  for (let node = chain; node !== null; node = node.before) out.push(node.item);
  return out.reverse();
}
