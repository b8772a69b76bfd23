// HL7 parse + normalize throughput on one core (MLLP deframing, parsing, unescaping, ORU to keyed
// results, mapping), beside the fastest serial line an analyzer uses: 115,200 baud carries 11,520
// bytes/s (8N1), so `ratio` is how many such lines one core keeps up with.
import { decodeHl7Capture } from '../drivers/hl7/decode.js';
import type { InstrumentProfile } from '../src/config/mapping.js';
import { sig, type BenchLine } from './line.js';

const LINE_RATE = 11_520;
const MESSAGES = 2_000;
const OBX_PER_MESSAGE = 20;
const MIN_MS = 1_500;

const codes = Array.from({ length: OBX_PER_MESSAGE }, (_, i) => `T${String(i).padStart(2, '0')}`);
const profile: InstrumentProfile = {
  id: 'bench',
  gatewayId: 'gw-bench',
  timezone: 'Europe/Vienna',
  mapping: codes.map((code, i) => ({ code, loinc: `${1000 + i}-${i % 10}`, unit: 'mmol/L' })),
};

// A v2.5 ORU as chemistry analyzers send it: 20 OBX with CE codes, ranges, repeated flags, one escape.
function message(n: number): string {
  const obx = codes.map(
    (code, i) =>
      `OBX|${i + 1}|NM|${code}^Test \\T\\ ${i}^L||${(4 + (n % 50) / 10).toFixed(2)}|mmol/L|3.5-5.1|H~A|||F|||20241029${String(8 + (n % 10)).padStart(2, '0')}${String(n % 60).padStart(2, '0')}00||||AN-01`,
  );
  return (
    [`MSH|^~\\&|ANALYZER|LAB|LIS|HOSP|20241029120000||ORU^R01^ORU_R01|M${n}|P|2.5`, 'PID|1||P1', `OBR|1||ACC${n}|PANEL^Panel^L|||20241029080000`, ...obx].join(
      '\r',
    ) + '\r'
  );
}

/** The figures this file emits (`npm run bench <figure>`). */
export const figures = ['hl7.decode', 'hl7.decode.results'];

/** Runs the HL7 decoding figures. */
export async function run(emit: (line: BenchLine) => void): Promise<void> {
  const capture = Buffer.concat(
    Array.from({ length: MESSAGES }, (_, n) => Buffer.concat([Buffer.from([0x0b]), Buffer.from(message(n), 'latin1'), Buffer.from([0x1c, 0x0d])])),
  );
  decodeHl7Capture(capture, profile); // warm-up
  let rounds = 0;
  let results = 0;
  const start = performance.now();
  while (performance.now() - start < MIN_MS) {
    for (const m of decodeHl7Capture(capture, profile)) results += m.results.length;
    rounds += 1;
  }
  const seconds = (performance.now() - start) / 1000;
  const bytesPerSec = (capture.length * rounds) / seconds;
  if (results !== rounds * MESSAGES * OBX_PER_MESSAGE) throw new Error(`bench decoded ${results} results, expected ${rounds * MESSAGES * OBX_PER_MESSAGE}`);
  emit({ bench: 'hl7.decode', value: sig(bytesPerSec / 1e6), unit: 'MB/s', lineRate115200: LINE_RATE, ratio: sig(bytesPerSec / LINE_RATE) });
  emit({
    bench: 'hl7.decode.results',
    value: sig(results / seconds),
    unit: 'results/s',
    lineRate115200ResultsPerSec: sig((LINE_RATE / capture.length) * MESSAGES * OBX_PER_MESSAGE),
    ratio: sig(bytesPerSec / LINE_RATE),
  });
}
