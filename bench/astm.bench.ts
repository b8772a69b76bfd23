// ASTM throughput on one core: the LIS01-A2 link layer, LIS2-A2 record parsing and normalization, fed in
// 64-byte chunks as a UART delivers them, against the serial line rates it has to keep up with.
import { decodeAstmText, linkConfigOf } from '../drivers/astm/decode.js';
import { encodeFrame } from '../drivers/astm/frame.js';
import { frameTexts } from '../drivers/astm/emulator.js';
import type { LinkInput, LinkState } from '../drivers/astm/link.js';
import { drive, initialLinkState } from '../drivers/astm/link.js';
import { parseAstmOptions } from '../drivers/astm/options.js';
import type { InstrumentProfile } from '../src/config/mapping.js';
import type { BenchLine } from './line.js';
import { sig } from './line.js';

const codes = [
  'WBC',
  'RBC',
  'HGB',
  'HCT',
  'MCV',
  'MCH',
  'MCHC',
  'PLT',
  'RDW-SD',
  'RDW-CV',
  'MPV',
  'NEUT#',
  'LYMPH#',
  'MONO#',
  'EO#',
  'BASO#',
  'NEUT%',
  'LYMPH%',
  'MONO%',
  'EO%',
  'BASO%',
  'IG#',
  'IG%',
];
const profile: InstrumentProfile = {
  id: 'bench-xn',
  gatewayId: 'gw-bench',
  timezone: 'Europe/Vienna',
  mapping: codes.map((code, i) => ({ code, loinc: `${10000 + i}-0` })),
};
const options = parseAstmOptions({ accession: { field: 'O.4', component: 3 }, codeComponents: [5] });

/** One session per message, as a Sysmex XN sends a CBC with differential: ENQ, 240-character frames, EOT. */
function session(n: number): Buffer {
  const text =
    [
      'H|\\^&|||XN-550^00-24^22723^^^^BD634545||||||||E1394-97',
      'P|1|||37182|^Jane^Doe||19870626|F',
      `O|1||^^                  ${String(n).padStart(6, '0')}^M|^^^^WBC\\^^^^RBC|||||||N||||||||||||||F`,
      ...codes.map((c, i) => `R|${i + 1}|^^^^${c}^1|${(i * 1.37 + (n % 7)).toFixed(2)}|10*3/uL||N||F||||20260627135407`),
      'L|1|N',
    ].join('\r') + '\r';
  const frames = frameTexts(Buffer.from(text, 'latin1'), 247, 'message').map((t, i, all) => encodeFrame(i + 1, t, i === all.length - 1));
  return Buffer.concat([Buffer.from([0x05]), ...frames, Buffer.from([0x04])]);
}

/** Runs the receiver over the stream the way the runner does (commit → decode → committed, in a loop). */
function receive(stream: Buffer, chunk: number): number {
  let state: LinkState = initialLinkState(linkConfigOf(options));
  let results = 0;
  const feed = (input: LinkInput): void => {
    state = drive(state, input, (e) => {
      if (e.kind !== 'commit') return;
      results += decodeAstmText(e.text, profile, options).results.length;
      return { kind: 'committed', ok: true };
    });
  };
  for (let i = 0; i < stream.length; i += chunk) feed({ kind: 'bytes', data: stream.subarray(i, i + chunk) });
  return results;
}

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['astm.parse', 'astm.results'];

/** Emits astm.parse (MB/s) and astm.results (results/s), each beside the 9,600 and 115,200 baud line rates. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const stream = Buffer.concat(Array.from({ length: 500 }, (_, n) => session(n)));
  receive(stream, 64);
  let bytes = 0;
  let results = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < 2) {
    results += receive(stream, 64);
    bytes += stream.length;
    elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  }
  if (results !== (bytes / stream.length) * 500 * codes.length) throw new Error(`lost results: ${results}`);
  const bytesPerSec = bytes / elapsed;
  const resultsPerSec = results / elapsed;
  const rates = { lineRate9600: 960, lineRate115200: 11_520, ratioTo9600: sig(bytesPerSec / 960), ratioTo115200: sig(bytesPerSec / 11_520) };
  const messageBytes = sig(stream.length / 500);
  emit({ bench: 'astm.parse', value: sig(bytesPerSec / 1e6), unit: 'MB/s', resultsPerSec: sig(resultsPerSec), ...rates, messageBytes, chunkBytes: 64 });
  const lineResults115200 = (11_520 / (stream.length / 500)) * codes.length;
  emit({
    bench: 'astm.results',
    value: sig(resultsPerSec),
    unit: 'results/s',
    lineResultsPerSec115200: sig(lineResults115200),
    ratioTo115200: sig(resultsPerSec / lineResults115200),
  });
}
