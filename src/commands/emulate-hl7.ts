// `labgate emulate --hl7 DIALECT`: an HL7 analyzer in query mode on a serial port (drivers/hl7/emulator-query.ts), to
// try a two-way HL7 instrument without one: for each specimen it asks the host for its orders (QRY^Q02, or QBP^Q11),
// accepts the answer (ACK^Q03, ORL^O34), runs exactly the tests it was sent and sends their results (ORU^R01, or
// OUL^R22), timed by this machine's clock in UTC. It prints what each query came to; no patient data.
import { Hl7QueryingAnalyzer, type AnalyzerLink, type EmulatedDialect } from '../../drivers/hl7/emulator-query.js';

/** What a result of each test reads; tests it does not know read 1.0. */
const values: Record<string, string> = { GLU: '5.4', NA: '140', K: '4.1', CREA: '88' };

/** Queries `specimens` specimens (EMU-0001 on) in `dialect`, waiting `deadlineMs` for each answer. */
export async function emulateHl7Queries(
  link: AnalyzerLink,
  dialect: EmulatedDialect,
  specimens: number,
  deadlineMs: number,
  out: NodeJS.WritableStream,
): Promise<void> {
  const analyzer = new Hl7QueryingAnalyzer(link, dialect);
  for (let n = 1; n <= specimens; n++) {
    const accession = `EMU-${String(n).padStart(4, '0')}`;
    const outcome = await analyzer.query(accession, deadlineMs);
    if (outcome.kind === 'missed') {
      out.write(`specimen ${accession}: no answer within ${deadlineMs / 1000} s\n`);
      continue;
    }
    if (outcome.codes.length === 0) {
      out.write(`specimen ${accession}: no orders\n`);
      continue;
    }
    out.write(`specimen ${accession}: ordered ${outcome.codes.join(' ')}\n`);
    const code = await analyzer.sendResults(accession, outcome.codes, (c) => values[c] ?? '1.0', deadlineMs);
    out.write(`specimen ${accession}: results ${code === 'AA' ? 'accepted (AA)' : `answered ${code}`}\n`);
  }
}
