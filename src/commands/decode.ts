// `labgate decode`: decodes a capture exactly as the running gateway would, without a store, so a technician
// can check a new analyzer's mapping before going live. Exit 0 nothing rejected, 3 something rejected, 2 usage.
import { readFileSync } from 'node:fs';
import type { CliIo, Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { loadConfig } from '../config/load.js';
import { formatProblems } from '../config/problem.js';
import { bindInstruments, loadDrivers } from '../driver-registry.js';
import { LabgateError } from '../errors.js';
import type { DecodedMessage } from '../message.js';
import { dedupKey, recordId } from '../result.js';

const help = `Usage: labgate decode --config FILE --instrument ID [CAPTURE...]

Decodes captures (raw link-layer bytes or bare records/segments/lines; stdin when no file is given) with the
instrument's configured driver, framing, mapping and clock zone. Prints one JSON line per result, per host query
(ASTM Q record, HL7 QRY^Q02 or QBP^Q11: kind query) and per rejection.
Exit status: 0 nothing rejected, 3 something rejected, 2 usage or configuration error.`;

export const command: Command = async (args, io) => {
  const options = { ...configOption, instrument: { type: 'string' } } as const;
  const { values, positionals } = commandArgs({ args, options, allowPositionals: true }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  if (!values.config || !values.instrument) throw new LabgateError('USAGE', `--config and --instrument are required\n\n${help}`);
  const config = loadConfig(values.config);
  await loadDrivers(config.instruments);
  const bound = bindInstruments(config);
  if (bound.kind === 'invalid') throw new LabgateError('CONFIG_INVALID', `${values.config} is invalid:\n${formatProblems(bound.problems)}`);
  const instrument = bound.instruments.get(values.instrument);
  if (!instrument) {
    const known = [...bound.instruments.keys()].join(', ') || 'none';
    throw new LabgateError('USAGE', `no instrument '${values.instrument}' in ${values.config} (configured: ${known})`);
  }
  const captures = positionals.length ? positionals.map(readCapture) : [await readAll(io.stdin)];
  let rejected = 0;
  for (const raw of captures) {
    for (const message of instrument.driver.decodeCapture(raw, instrument.profile)) {
      rejected += printMessage(message, io);
    }
  }
  return rejected > 0 ? 3 : 0;
};

function readCapture(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new LabgateError('USAGE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  return Buffer.concat(chunks);
}

/** Prints one message's results and rejections; returns how many were rejected. */
function printMessage(message: DecodedMessage, io: CliIo): number {
  for (const r of message.results) {
    const key = dedupKey(r);
    const line = {
      kind: 'result',
      dedupKey: key,
      recordId: recordId(key),
      accession: r.accession,
      analyteLoinc: r.analyteLoinc,
      instrumentId: r.instrumentId,
      resultedAt: r.resultedAt,
      value: r.value,
      valueText: r.valueText,
      comparator: r.comparator,
      bound: r.bound,
      unit: r.unit,
      status: r.status,
      statusCode: r.statusCode,
      flags: r.flags,
      referenceRange: r.referenceRange,
      qc: r.qc,
      source: r.source,
    };
    io.stdout.write(JSON.stringify(line) + '\n');
  }
  // A host query (ASTM Q record, HL7 QRY^Q02 or QBP^Q11): what the analyzer asked for, as a two-way instrument would answer it.
  for (const query of message.queries ?? []) io.stdout.write(JSON.stringify({ kind: 'query', ...query }) + '\n');
  for (const rejection of message.rejections) io.stdout.write(JSON.stringify({ kind: 'rejected', ...rejection }) + '\n');
  return message.rejections.length;
}
