// `labgate emulate --port PATH`: an ASTM analyzer on a serial port, to try a gateway (detection, codes seen, reload,
// delivery) without one. It is the project's LIS01-A2 sender (drivers/astm/emulator.ts): ENQ, frames with real
// checksums, the 15 s reply timeout, then EOT; a host that never answers gets the ENQ again after --every seconds,
// as an analyzer with results waiting does. The result times are its clock's, in UTC (configure `timezone: UTC`).
import { readFileSync } from 'node:fs';
import { SerialPort } from 'serialport';
import type { Command } from './command.js';
import { AstmEmulator } from '../../drivers/astm/emulator.js';
import { systemClock } from '../clock.js';
import { LabgateError } from '../errors.js';
import { SerialTransport } from '../transport/serial.js';
import { commandArgs } from './args.js';
import { emulateHl7Queries } from './emulate-hl7.js';

const help = `Usage: labgate emulate --port PATH [--baud N] [--every S] [--reply-timeout S] [--specimens N] [--message FILE]
       labgate emulate --port PATH --hl7 display-query|law [--baud N] [--reply-timeout S] [--specimens N]

Plays an ASTM analyzer (LIS01-A2 link, LIS2-A2 records) on the serial port PATH: one specimen per session, its
results coded GLU, NA, K and CREA, timed by this machine's clock in UTC. While the host does not answer within
--reply-timeout seconds (default 15, the standard's), it sends EOT and tries again after --every seconds (default
10). Stops once --specimens sessions went through (default 1). --message FILE sends the records in FILE instead
(H to L, one per line).

--hl7 plays an HL7 analyzer in query mode instead (MLLP): for each specimen (EMU-0001 on) it asks the host for its
orders, QRY^Q02 (display-query, as Mindray's BS and BC series) or QBP^Q11 (law, IHE LAW), waits --reply-timeout
seconds for the answer, accepts it, and sends results for exactly the tests it was sent (ORU^R01, or OUL^R22).`;

const options = {
  port: { type: 'string' },
  baud: { type: 'string', default: '9600' },
  every: { type: 'string', default: '10' },
  'reply-timeout': { type: 'string', default: '15' },
  specimens: { type: 'string', default: '1' },
  message: { type: 'string' },
  hl7: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  if (!values.port) throw new LabgateError('USAGE', `--port is required\n\n${help}`);
  const [baudRate, every, specimens, reply] = [values.baud, values.every, values.specimens, values['reply-timeout']].map((v) => Number(v));
  if (![baudRate, every, specimens, reply].every((n) => Number.isFinite(n) && n! > 0))
    throw new LabgateError('USAGE', `--baud, --every, --specimens and --reply-timeout take positive numbers\n\n${help}`);
  if (values.hl7 !== undefined && values.hl7 !== 'display-query' && values.hl7 !== 'law')
    throw new LabgateError('USAGE', `--hl7 takes display-query or law\n\n${help}`);
  const port = new SerialPort({ path: values.port, baudRate: baudRate!, autoOpen: false });
  await new Promise<void>((resolve, reject) =>
    port.open((err) => (err ? reject(new LabgateError('USAGE', `cannot open ${values.port}: ${err.message}`)) : resolve())),
  );
  const transport = new SerialTransport(port);
  if (values.hl7 !== undefined) {
    try {
      await emulateHl7Queries(transport, values.hl7, specimens!, reply! * 1000, io.stdout);
    } finally {
      await transport.close();
    }
    return 0;
  }
  try {
    for (let n = 1; n <= specimens!; n++) {
      const message = values.message ? records(readFileSync(values.message, 'latin1')) : specimen(n, new Date(systemClock.now()));
      await sendUntilAnswered(new AstmEmulator(transport, systemClock, { maxRestarts: 0, replyTimeoutMs: reply! * 1000 }), message, every! * 1000, io.stdout);
      io.stdout.write(`specimen ${n} of ${specimens}: delivered\n`);
    }
  } finally {
    await transport.close();
  }
  return 0;
};

async function sendUntilAnswered(emulator: AstmEmulator, message: string, everyMs: number, out: NodeJS.WritableStream): Promise<void> {
  for (;;) {
    const outcome = await emulator.send([message]);
    if (outcome.kind === 'sent') return;
    out.write(`no answer (${outcome.reason}); trying again in ${everyMs / 1000} s\n`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** One specimen's message: four chemistry results, the time this machine's clock shows in UTC. */
export function specimen(n: number, now: Date): string {
  const t = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const accession = `EMU-${String(n).padStart(4, '0')}`;
  const results = [
    ['GLU', '5.4', 'mmol/L'],
    ['NA', '140', 'mmol/L'],
    ['K', '4.1', 'mmol/L'],
    ['CREA', '88', 'umol/L'],
  ];
  return records(
    [
      `H|\\^&|||labgate-emulate^1|||||||P|1|${t}`,
      `P|1`,
      `O|1|${accession}||^^^CHEM|R|${t}`,
      ...results.map(([code, value, unit], i) => `R|${i + 1}|^^^${code}|${value}|${unit}||N||F||||${t}`),
      'L|1|N',
    ].join('\n'),
  );
}

// Records one per line, each ended by CR as LIS2-A2 writes them.
function records(text: string): string {
  return (
    text
      .split(/\r\n|\r|\n/)
      .filter((l) => l !== '')
      .join('\r') + '\r'
  );
}
