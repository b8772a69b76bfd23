// What a laboratory would configure for each analyzer of the shared captures (../shared/captures/astm).
// LOINC codes are given where the analyte is unambiguous; analyzer flags, image file names and vendor
// application codes we cannot verify map to local codes (`X-<model>-<code>`), as a laboratory would.
import type { AnalyteMapping } from '../../../src/config/mapping.js';
import type { AstmOptionsInput } from '../../../drivers/astm/options.js';

const loinc: Record<string, string> = {
  WBC: '6690-2',
  RBC: '789-8',
  HGB: '718-7',
  HCT: '4544-3',
  MCV: '787-2',
  MCH: '785-6',
  MCHC: '786-4',
  PLT: '777-3',
  'RDW-SD': '21000-5',
  'RDW-CV': '788-0',
  MPV: '32623-1',
  PDW: '32207-3',
  'P-LCR': '48386-7',
  PCT: '51637-7',
  'NEUT#': '751-8',
  'NEU#': '751-8',
  'NEUT%': '770-8',
  'NEU%': '770-8',
  'LYMPH#': '731-0',
  'LYM#': '731-0',
  'LYMPH%': '736-9',
  'LYM%': '736-9',
  'MONO#': '742-7',
  'MON#': '742-7',
  'MONO%': '5905-5',
  'MON%': '5905-5',
  'EO#': '711-2',
  'EOS#': '711-2',
  'EO%': '713-8',
  'EOS%': '713-8',
  'BASO#': '704-7',
  'BAS#': '704-7',
  'BASO%': '706-2',
  'BAS%': '706-2',
  'IG#': '51584-1',
  'IG%': '71695-1',
  HbA1c: '4548-4',
  Alb: '14957-5',
  Crt: '2161-8',
  Ratio: '9318-7',
};

function mapping(model: string, codes: string[]): AnalyteMapping[] {
  return codes.map((code) => ({ code, loinc: loinc[code] ?? `X-${model}-${code}` }));
}

export interface CaptureProfile {
  file: string;
  /** The analyzer clock zone; the readings give none, so UTC (the comparison converts with the same zone). */
  timezone: string;
  options: AstmOptionsInput;
  mapping: AnalyteMapping[];
}

const xn550Codes = [
  'WBC',
  'RBC',
  'HGB',
  'HCT',
  'MCV',
  'MCH',
  'MCHC',
  'PLT',
  'NEUT%',
  'LYMPH%',
  'MONO%',
  'EO%',
  'BASO%',
  'NEUT#',
  'LYMPH#',
  'MONO#',
  'EO#',
  'BASO#',
  'IG%',
  'IG#',
  'RDW-SD',
  'RDW-CV',
  'MPV',
  'Eosinophilia',
  'Anemia',
  'Blasts/Abn_Lympho?',
  'Left_Shift?',
  'Atypical_Lympho?',
  'NRBC?',
  'RBC_Agglutination?',
  'Turbidity/HGB_Interference?',
  'Iron_Deficiency?',
  'HGB_Defect?',
  'Fragments?',
  'PLT_Clumps?',
  'Positive_Diff',
  'Positive_Count',
  'SCAT_WDF',
  'SCAT_WDF-CBC',
  'DIST_RBC',
  'DIST_PLT',
];
const xp100Codes = [
  'WBC',
  'RBC',
  'HGB',
  'HCT',
  'MCV',
  'MCH',
  'MCHC',
  'PLT',
  'LYM%',
  'MXD%',
  'NEUT%',
  'LYM#',
  'MXD#',
  'NEUT#',
  'RDW-SD',
  'RDW-CV',
  'PDW',
  'MPV',
  'P-LCR',
  'PCT',
];
const h500Codes = [
  'MCV',
  'NEU#',
  'NEU%',
  'RDW-CV',
  'MPV',
  'RBC',
  'MON#',
  'PLT',
  'WBC',
  'MON%',
  'LYM#',
  'HGB',
  'LYM%',
  'RDW-SD',
  'BAS%',
  'BAS#',
  'MCH',
  'MCHC',
  'HCT',
  'EOS#',
  'EOS%',
];

/** One profile per capture file. Deviations are exactly those each analyzer's bytes need. */
export const captureProfiles: CaptureProfile[] = [
  {
    file: 'senaite-astm__abbott_afinion2.txt',
    timezone: 'UTC',
    // One 182-character frame with a CR-only trailer; the only identifier is P.4 (see the test's notes).
    options: { deviations: { trailers: ['CRLF', 'CR'] }, accession: { field: 'P.4', component: 1 } },
    mapping: [{ code: 'HbA1c', loinc: '4548-4', unit: '%' }],
  },
  {
    file: 'senaite-astm__cobas_c111.txt',
    timezone: 'UTC',
    // LF-only trailers; ETB on frames that hold whole records; SID in O.4 component 1.
    options: { deviations: { trailers: ['CRLF', 'LF'] }, accession: { field: 'O.4', component: 1 } },
    mapping: [{ code: '413', loinc: 'X-c111-413', unit: 'g/L' }],
  },
  {
    file: 'senaite-astm__cobas_c311.txt',
    timezone: 'UTC',
    // One 617-character frame (over E1381-95's 247, within LIS01-A2's 64,000); SID in O.3 component 2.
    options: { maxFrameBytes: 1024, accession: { field: 'O.3', component: 2 } },
    mapping: mapping('c311', ['685/', '687/', '712/', '158/', '735/', '717/', '690/']),
  },
  {
    file: 'senaite-astm__dca_vantage.txt',
    timezone: 'UTC',
    options: { maxFrameBytes: 512, deviations: { trailers: ['CRLF', 'CR'] }, accession: { field: 'P.3', component: 1 } },
    mapping: [
      { code: 'Alb', loinc: '14957-5', unit: 'mg/L' },
      { code: 'Crt', loinc: '2161-8', unit: 'mg/dL' },
      { code: 'Ratio', loinc: '9318-7', unit: 'mg/g' },
    ],
  },
  {
    file: 'senaite-astm__sysmex_xn550.txt',
    timezone: 'UTC',
    options: { maxFrameBytes: 4096, deviations: { trailers: ['CRLF', 'CR'] }, accession: { field: 'O.4', component: 3 }, codeComponents: [5] },
    mapping: mapping('XN', xn550Codes),
  },
  {
    file: 'senaite-astm__sysmex_xp100.txt',
    timezone: 'UTC',
    options: { maxFrameBytes: 2048, deviations: { trailers: ['CRLF', 'CR'] }, accession: { field: 'O.4', component: 3 }, codeComponents: [5] },
    mapping: mapping('XP', xp100Codes),
  },
  {
    file: 'senaite-astm__yumizen_h500.txt',
    timezone: 'UTC',
    // LF-only trailers, a 26,645-character M frame, and frame numbers 1,2,3,4,5,1,1,1,4,5,...
    options: { maxFrameBytes: 32_768, deviations: { trailers: ['CRLF', 'LF'], frameNumbers: 'any' } },
    mapping: mapping('H500', h500Codes),
  },
];
