// The emulated analyzer in query mode: it asks the host which tests a specimen needs (an H, Q, L message), waits for
// the answer within its own deadline, runs exactly the tests it was sent, and sends their results. Its own
// deadline is what it waits before calling the query missed, as an analyzer does.
import type { Clock } from '../../src/clock.js';
import { readDelimiters } from './delimiters.js';
import type { AstmEmulator, EmulatorOutcome } from './emulator.js';
import type { AnalyzerReceiver } from './emulator-receiver.js';

/** What a query came to. `enqAfterMs`: from the query's EOT to the host's answer ENQ. */
export type QueryOutcome =
  | { kind: 'answered'; orders: Map<string, string[]>; termination: string; enqAfterMs: number; completeAfterMs: number }
  | { kind: 'missed' }
  | { kind: 'not-sent'; outcome: EmulatorOutcome };

/** An H, Q, L message asking for the orders of `accessions` (one Q record, the ids as repeats of Q.3 component 2). */
export function queryMessage(accessions: readonly string[], at: number): string {
  const ids = accessions.map((a) => `^${a}`).join('\\');
  return [`H|\\^&|||Emu^1|||||||P|1|${stamp(at)}`, `Q|1|${ids}||^^^ALL||||||||O`, 'L|1|N'].join('\r') + '\r';
}

/** An answer's orders (O.3 component 1 → the codes in O.5, component 4 of each repeat) and its L.3 code. */
export function readAnswer(text: string): { orders: Map<string, string[]>; termination: string } {
  const records = text.split(/\r\n|\r|\n/).filter((r) => r.length > 0);
  const read = readDelimiters(records[0] ?? '');
  const d = read.kind === 'delimiters' ? read.delimiters : { field: '|', repeat: '\\', component: '^', escape: '&' };
  const orders = new Map<string, string[]>();
  let termination = '';
  for (const record of records) {
    const f = record.split(d.field);
    if (f[0] === 'O') {
      const codes = (f[4] ?? '')
        .split(d.repeat)
        .map((t) => t.split(d.component)[3] ?? '')
        .filter((c) => c !== '');
      orders.set((f[2] ?? '').split(d.component)[0] ?? '', codes);
    } else if (f[0] === 'L') termination = f[2] ?? '';
  }
  return { orders, termination };
}

/** One specimen's results for exactly `codes`, each value from `valueOf`. */
export function resultsMessage(accession: string, codes: readonly string[], at: number, valueOf: (code: string) => string): string {
  const tests = codes.map((c) => `^^^${c}`).join('\\');
  const results = codes.map((c, i) => `R|${i + 1}|^^^${c}|${valueOf(c)}|mmol/L||N||F||||${stamp(at)}`);
  return [`H|\\^&|||Emu^1|||||||P|1|${stamp(at)}`, 'P|1', `O|1|${accession}||${tests}`, ...results, 'L|1|N'].join('\r') + '\r';
}

/** The analyzer asking, and running what it was told. */
export class QueryingAnalyzer {
  constructor(
    private readonly emulator: AstmEmulator,
    private readonly receiver: AnalyzerReceiver,
    private readonly clock: Clock,
  ) {
    emulator.listen(receiver.feed);
  }

  /** Asks for the orders of `accessions`; an answer not complete within `deadlineMs` of the query's EOT is missed. */
  async query(accessions: readonly string[], deadlineMs: number): Promise<QueryOutcome> {
    const sent = await this.emulator.send([queryMessage(accessions, this.clock.now())]);
    if (sent.kind !== 'sent') return { kind: 'not-sent', outcome: sent };
    const eotAt = this.emulator.lastEotAt ?? this.clock.now();
    const answer = await this.receiver.next(Math.max(0, eotAt + deadlineMs - this.clock.now()));
    if (!answer) return { kind: 'missed' };
    return { kind: 'answered', ...readAnswer(answer.text.toString('latin1')), enqAfterMs: answer.enqAt - eotAt, completeAfterMs: answer.at - eotAt };
  }

  /** Runs exactly the ordered tests and sends their results, one message per specimen, in one session. */
  runOrdered(orders: ReadonlyMap<string, readonly string[]>, valueOf: (accession: string, code: string) => string): Promise<EmulatorOutcome> {
    const at = this.clock.now();
    const messages = [...orders]
      .filter(([, codes]) => codes.length > 0)
      .map(([accession, codes]) => resultsMessage(accession, codes, at, (c) => valueOf(accession, c)));
    if (messages.length === 0) return Promise.resolve({ kind: 'sent', frames: 0, retransmissions: 0, restarts: 0 });
    return this.emulator.send(messages);
  }
}

function stamp(at: number): string {
  return new Date(at).toISOString().replace(/\D/g, '').slice(0, 14);
}
