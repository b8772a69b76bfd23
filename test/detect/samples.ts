// What analyzers put on the line before anyone answers them, written with mnemonics: an ASTM sender's ENQ and its EOT
// after the 15 s reply timeout (LIS01-A2 8.2, 8.5.2), an HL7 ORU^R01 in one MLLP block, a printed report (CR LF lines,
// as the CLINITEK Status+ prints), a SPOTCHEM-style STX ... ETX record, and ASTM records without the link layer.
import { bytes as astm } from '../astm/mnemonics.js';
import { bytes as hl7, segments } from '../hl7/mnemonic.js';

/** One burst per kind of sender, as it first reaches the line. */
export const samples = {
  enq: astm('<ENQ>'),
  eot: astm('<EOT>'),
  hl7: hl7(
    `<VT>${segments('MSH|^~\\&|ANALYZER|LAB|LIS|LAB|20260701120000||ORU^R01|MSG0001|P|2.5', 'PID|1', 'OBR|1|A26-0001', 'OBX|1|NM|GLU^Glucose||5.4|mmol/L|||||F|||20260701115900')}<FS><CR>`,
  ),
  printer: Buffer.from(
    'Date: 07/01/26   Time: 12:00PM\r\nOperator: ANNA\r\nPatient ID: A26-0001\r\nGLU          Negative\r\n*PRO          100 mg/dL\r\nSG           1.020\r\n',
    'latin1',
  ),
  stxEtx: astm('<STX>26/07/01 12:00 ID# A26-0001 Na 140 mmol/L K 4.1 mmol/L Cl 101 mmol/L     <ETX>x<LF>'),
  bareAstm: Buffer.from('H|\\^&|||Emu^1|||||||P|1|20260701120000\rP|1\rO|1|A26-0001\rR|1|^^^GLU|5.4|mmol/L||N||F\rL|1|N\r', 'latin1'),
} as const;

export type SampleName = keyof typeof samples;

/** What each sample is recognized as, at the sender's setting. */
export const expected: Record<SampleName, { protocol: 'astm' | 'hl7' | 'line'; form: string }> = {
  enq: { protocol: 'astm', form: 'link' },
  eot: { protocol: 'astm', form: 'link' },
  hl7: { protocol: 'hl7', form: 'mllp' },
  printer: { protocol: 'line', form: 'lines' },
  stxEtx: { protocol: 'line', form: 'stx-etx' },
  bareAstm: { protocol: 'astm', form: 'records' },
};
