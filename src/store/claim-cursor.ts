// Where each sink's next claim starts: just after the last row it claimed, in the claim's order (next_attempt_at, id).
// Why: a claim that starts at the first due row must step over every row still in flight (a drain at full speed keeps
// a few thousand: batches out, one claimed ahead, marks waiting to be written together) and pass their ids to SQLite
// to do so; starting after the last claimed row reads only the rows it returns.
// Rule: a sink's cursor holds while every pending row at or before it is in flight or held unsynced. Whatever puts a
// row back among the due rows behind it (a release, a retry due no later, a mark that did not apply, a group let in
// after its fsync, an operator's retry, a person's resolution) forgets it, and the next claim starts at the first due
// row again, as every claim did before. A row put back by another process is found when nothing follows the cursor.

/** A row's place in the claim order. */
export interface ClaimKey {
  at: number;
  id: number;
}

/** The sinks' cursors; none until a sink's first claim. */
export class ClaimCursors {
  private readonly bySink = new Map<string, ClaimKey>();

  /** Where `sink`'s next claim may start, or undefined: from the first due row. */
  of(sink: string): ClaimKey | undefined {
    return this.bySink.get(sink);
  }

  /** The last row `sink` claimed. */
  moveTo(sink: string, at: number, id: number): void {
    this.bySink.set(sink, { at, id });
  }

  /** True when a row due at `at` would lie at or before `sink`'s cursor, where no claim looks. */
  passed(sink: string, at: number, id: number): boolean {
    const c = this.bySink.get(sink);
    return c !== undefined && (at < c.at || (at === c.at && id <= c.id));
  }

  /** Every sink's cursor (a copy: forgetting one while going through them is safe). */
  all(): [string, ClaimKey][] {
    return [...this.bySink];
  }

  /** Forgets `sink`'s cursor, or every sink's. */
  forget(sink?: string): void {
    if (sink === undefined) this.bySink.clear();
    else this.bySink.delete(sink);
  }
}
