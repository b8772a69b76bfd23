// The line diff a configuration change is shown and audited with. The files are small and a change touches a few
// lines, so the common head and tail are set aside and only the middle is compared (longest common subsequence); a
// middle too large to compare in bounded memory is shown as removed and added whole.

/** One line of a diff: kept, removed or added. */
export interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
}

/** Lines compared at most (rows × columns of the table): some 4 MB. */
const MAX_CELLS = 1_000_000;

/** Every line of `before` and `after`, each marked kept, removed or added, in reading order. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const kept = (xs: string[]): DiffLine[] => xs.map((text) => ({ kind: ' ', text }));
  return [...kept(a.slice(0, head)), ...middle(a.slice(head, a.length - tail), b.slice(head, b.length - tail)), ...kept(a.slice(a.length - tail))];
}

/** True when the diff changes nothing. */
export function unchanged(diff: readonly DiffLine[]): boolean {
  return diff.every((l) => l.kind === ' ');
}

/** The changed lines with `context` kept lines around each; a skipped run of kept lines is one `null`. */
export function hunks(diff: readonly DiffLine[], context = 3): (DiffLine | null)[] {
  const near = diff.map(() => false);
  diff.forEach((l, i) => {
    if (l.kind === ' ') return;
    for (let j = Math.max(0, i - context); j <= Math.min(diff.length - 1, i + context); j++) near[j] = true;
  });
  const out: (DiffLine | null)[] = [];
  diff.forEach((l, i) => {
    if (near[i]) out.push(l);
    else if (out[out.length - 1] !== null) out.push(null);
  });
  return out;
}

/** The diff as text (`- old`, `+ new`, `  kept`, `…` for a skipped run), for the audit log. */
export function diffText(diff: readonly DiffLine[], context = 3): string {
  return hunks(diff, context)
    .map((l) => (l === null ? '…' : `${l.kind} ${l.text}`))
    .join('\n');
}

function lines(text: string): string[] {
  if (text === '') return [];
  return text.replace(/\n$/, '').split('\n');
}

function middle(a: string[], b: string[]): DiffLine[] {
  const removed = a.map((text): DiffLine => ({ kind: '-', text }));
  const added = b.map((text): DiffLine => ({ kind: '+', text }));
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_CELLS) return [...removed, ...added];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) out.push({ kind: '-', text: a[i++]! });
    else out.push({ kind: '+', text: b[j++]! });
  }
  return [...out, ...removed.slice(i), ...added.slice(j)];
}
