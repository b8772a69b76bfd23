// LOINCs the mapping form suggests, for the common analytes whose analyzer code and unit say plainly what they are: an
// exact code and an exact unit, nothing looser. A suggestion is shown with its full name (the specimen included) for a
// person to take or leave; it never fills a field by itself, and a code or unit not in this table gets none.

/** A suggested LOINC with its name, and what it was suggested from. */
export interface AnalyteSuggestion {
  loinc: string;
  name: string;
}

interface Row {
  codes: readonly string[];
  units: readonly string[];
  loinc: string;
  name: string;
}

const SERUM = 'in Serum or Plasma';
const COUNT = ['10*3/uL', '10^3/uL', 'x10^3/uL', '10*9/L', '10^9/L'];

const TABLE: readonly Row[] = [
  { codes: ['GLU', 'GLUC', 'GLUCOSE'], units: ['mg/dL'], loinc: '2345-7', name: `Glucose [Mass/volume] ${SERUM}` },
  { codes: ['GLU', 'GLUC', 'GLUCOSE'], units: ['mmol/L'], loinc: '14749-6', name: `Glucose [Moles/volume] ${SERUM}` },
  { codes: ['NA', 'SODIUM'], units: ['mmol/L', 'mEq/L'], loinc: '2951-2', name: `Sodium [Moles/volume] ${SERUM}` },
  { codes: ['K', 'POTASSIUM'], units: ['mmol/L', 'mEq/L'], loinc: '2823-3', name: `Potassium [Moles/volume] ${SERUM}` },
  { codes: ['CL', 'CHLORIDE'], units: ['mmol/L', 'mEq/L'], loinc: '2075-0', name: `Chloride [Moles/volume] ${SERUM}` },
  { codes: ['CREA', 'CREAT', 'CRE', 'CREATININE'], units: ['mg/dL'], loinc: '2160-0', name: `Creatinine [Mass/volume] ${SERUM}` },
  { codes: ['CREA', 'CREAT', 'CRE', 'CREATININE'], units: ['umol/L', 'µmol/L'], loinc: '14682-9', name: `Creatinine [Moles/volume] ${SERUM}` },
  { codes: ['BUN'], units: ['mg/dL'], loinc: '3094-0', name: `Urea nitrogen [Mass/volume] ${SERUM}` },
  { codes: ['CRP'], units: ['mg/L'], loinc: '1988-5', name: `C reactive protein [Mass/volume] ${SERUM}` },
  { codes: ['ALT', 'GPT', 'ALAT'], units: ['U/L'], loinc: '1742-6', name: `Alanine aminotransferase [Enzymatic activity/volume] ${SERUM}` },
  { codes: ['AST', 'GOT', 'ASAT'], units: ['U/L'], loinc: '1920-8', name: `Aspartate aminotransferase [Enzymatic activity/volume] ${SERUM}` },
  { codes: ['CHOL'], units: ['mg/dL'], loinc: '2093-3', name: `Cholesterol [Mass/volume] ${SERUM}` },
  { codes: ['HGB', 'HB'], units: ['g/dL'], loinc: '718-7', name: 'Hemoglobin [Mass/volume] in Blood' },
  { codes: ['WBC'], units: COUNT, loinc: '6690-2', name: 'Leukocytes [#/volume] in Blood by Automated count' },
  { codes: ['PLT'], units: COUNT, loinc: '777-3', name: 'Platelets [#/volume] in Blood by Automated count' },
  {
    codes: ['RBC'],
    units: ['10*6/uL', '10^6/uL', 'x10^6/uL', '10*12/L', '10^12/L'],
    loinc: '789-8',
    name: 'Erythrocytes [#/volume] in Blood by Automated count',
  },
  { codes: ['HBA1C', 'A1C'], units: ['%'], loinc: '4548-4', name: 'Hemoglobin A1c/Hemoglobin.total in Blood' },
];

/** The suggestion for an analyzer code and the unit it sends, or null when the two do not say it plainly. */
export function suggestLoinc(code: string, unit: string | null): AnalyteSuggestion | null {
  const c = code.trim().toUpperCase();
  const u = (unit ?? '').trim();
  const row = TABLE.find((r) => r.codes.includes(c) && r.units.includes(u));
  return row ? { loinc: row.loinc, name: row.name } : null;
}

/** Every LOINC the table can suggest (its test checks each one's check digit). */
export function suggestedLoincs(): string[] {
  return [...new Set(TABLE.map((r) => r.loinc))];
}
