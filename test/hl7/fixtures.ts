// HL7 fixtures written from vendors' public interface documentation (not copied captures), one per
// source: vendor, version and the traps its manual describes. Each comes with the profile and options
// that instrument would be configured with.
import type { InstrumentProfile } from '../../src/config/mapping.js';
import type { Hl7OptionsInput } from '../../drivers/hl7/options.js';
import { segments } from './mnemonic.js';

export interface Hl7Fixture {
  name: string;
  payload: string;
  profile: InstrumentProfile;
  options: Hl7OptionsInput;
}

const profile = (id: string, timezone: string, mapping: InstrumentProfile['mapping']): InstrumentProfile => ({ id, gatewayId: 'gw-test', timezone, mapping });

/** Mindray BS-series chemistry, v2.3.1: OBR-2 barcode, OBX-4 item name, MSH-16 reused for the result type (0 sample, 2 QC). */
export const mindrayBs: Hl7Fixture = {
  name: 'Mindray BS-240 v2.3.1',
  payload: segments(
    'MSH|^~\\&|Mindray|BS-240|||20241029083015||ORU^R01|12|P|2.3.1||||0||ASCII|||',
    'PID|1||||||0|||||0|||||||||||||||||||',
    'OBR|1|2410290017|17|Mindray^BS-240|N||20241029081200||||||||serum|||||||||||||||||||||||||||||||||',
    'OBX|1|NM|2|GLU|5.42|mmol/L|3.9-6.1|N|||F||5.42|20241029082955||||',
    'OBX|2|NM|5|CREA|<18|umol/L|45-84|L|||F||<18|20241029083003||||',
    'OBX|3|NM|8|K|6.8|mmol/L|3.5-5.3|H|||F||6.8|20241029083010||||',
  ),
  profile: profile('bs240', 'Europe/Vienna', [
    { code: 'GLU', loinc: '2345-7', unit: 'mmol/L' },
    { code: 'CREA', loinc: '14682-9', unit: 'umol/L' },
    { code: 'K', loinc: '2823-3', unit: 'mmol/L' },
  ]),
  options: { accession: ['OBR-2', 'OBR-3'], code: ['OBX-4'], qc: { field: 'MSH-16', equals: ['2'] } },
};

/** The same analyzer's QC run: MSH-16 = 2. */
export const mindrayBsQc: Hl7Fixture = {
  ...mindrayBs,
  name: 'Mindray BS-240 QC',
  payload: mindrayBs.payload.replace('||||0||ASCII', '||||2||ASCII').replace('|2410290017|17|', '|QC-LOW-0412|1|'),
};

/** Radiometer ABL90 FLEX blood gas, v2.4: enhanced acknowledgment (MSH-15 AL, MSH-16 NE), times with offsets, escapes. */
export const radiometerAbl: Hl7Fixture = {
  name: 'Radiometer ABL90 FLEX v2.4',
  payload: segments(
    'MSH|^~\\&|ABL90|ICU-2|LIS|HOSP|20240331015930+0100||ORU^R01^ORU_R01|ABL-000318|P|2.4|||AL|NE||8859/1',
    'PID|1||MRN-1^^^HOSP||Doe^Jane',
    'OBR|1||BG-5521^ABL90|BG^Blood gas^L|||20240331015800+0100',
    'OBX|1|NM|pH^pH^L||7.381||7.350-7.450|N|||F|||20240331015800+0100||||ABL90-SN7731',
    'OBX|2|NM|pCO2^pCO2^L||5.41|kPa|4.67-6.00|N|||F|||20240331015800+0100||||ABL90-SN7731',
    'OBX|3|NM|cK+^Potassium^L||4.1|mmol/L|3.5-5.0||||F|||20240331015800+0100||||ABL90-SN7731',
    'OBX|4|ST|Comment^Comment^L||syringe \\T\\ capillary \\F\\ note\\E\\x||||||F|||20240331015800+0100',
  ),
  profile: profile('abl90', 'Europe/Vienna', [
    { code: 'pH', loinc: '2744-1', unit: null },
    { code: 'pCO2', loinc: '2019-8', unit: 'kPa' },
    { code: 'cK+', loinc: '6298-4', unit: 'mmol/L' },
    { code: 'Comment', loinc: '8251-1' },
  ]),
  options: {},
};

/** A v2.5.1 laboratory result (LRI style, e.g. Siemens Atellica through its middleware): ORC, SPM accession, LOINC by coding system, SN, CWE, corrections. */
export const lri251: Hl7Fixture = {
  name: 'LRI v2.5.1 with SPM',
  payload: segments(
    'MSH|^~\\&|ATELLICA-DM^2.16.840.1.113883.3.1^ISO|CORE-LAB|LIS|HOSP|20241029101502-0500||ORU^R01^ORU_R01|MSG-88213|P|2.5.1|||NE|AL',
    'PID|1||PAT-55^^^HOSP^MR||Roe^Richard||19700101|M',
    'ORC|RE|PL-4411|FL-9920',
    'OBR|1|PL-4411|FL-9920|24323-8^Comprehensive metabolic panel^LN|||20241029094000-0500',
    'OBX|1|NM|2345-7^Glucose^LN^GLU^Glucose^L||98|mg/dL^mg/dL^UCUM|70-99||||F|||20241029100512-0500||||ATL-01^Atellica CH 930',
    'OBX|2|SN|1988-5^CRP^LN^CRP^CRP^L||<^0.5|mg/dL^mg/dL^UCUM|<1.0||||C|||20241029100600-0500||||ATL-01',
    'OBX|3|CWE|5196-1^HBsAg^LN^HBSAG^HBsAg^L||260385009^Negative^SCT||Negative||||F|||20241029101001-0500||||ATL-02',
    'OBX|4|NM|2951-2^Sodium^LN^NA^Sodium^L||||136-145||||X|||20241029100512-0500||||ATL-01',
    'SPM|1|PL-4411&LIS^ACC-77213&LAB||119297000^Blood specimen^SCT',
    'OBX|5|NM|SPECVOL^Specimen volume^L||4|mL',
  ),
  profile: profile('atellica', 'America/Chicago', [
    { code: '2345-7', loinc: '2345-7', unit: 'mg/dL' },
    { code: '1988-5', loinc: '1988-5', unit: 'mg/dL' },
    { code: '5196-1', loinc: '5196-1' },
    { code: '2951-2', loinc: '2951-2' },
  ]),
  options: { accession: ['SPM-2.2.1', 'OBR-3.1'], codingSystem: 'LN' },
};

/** Beckman Coulter DxH-style hematology, v2.5: LF segment ends, NTE, repeated OBX-8 flags, OBR-7 only (local time). */
export const hematology25: Hl7Fixture = {
  name: 'DxH-style hematology v2.5 (LF)',
  payload:
    [
      'MSH|^~\\&|DxH|HEME-1|LIS||20241027025500||ORU^R01^ORU_R01|DXH-7781|P|2.5',
      'PID|1||H-1',
      'OBR|1||24HEM0099|CBC^Complete blood count^L|||20241027023000',
      'NTE|1||Sample aspirated in open mode',
      'OBX|1|NM|6690-2^WBC^LN||12.4|10*3/uL|4.0-10.0|H~A|||F',
      'OBX|2|NM|718-7^HGB^LN||13.1|g/dL|12.0-16.0||||F',
      'OBX|3|NM|787-2^MCV^LN||*****|fL|80-100|~A|||X',
      'OBX|4|ED|WBCHIST^WBC histogram^L||^Image^PNG^Base64^iVBORw0KGgo=||||||F',
    ].join('\n') + '\n',
  profile: profile('dxh', 'Europe/Berlin', [
    { code: '6690-2', loinc: '6690-2', unit: '10*3/uL' },
    { code: '718-7', loinc: '718-7', unit: 'g/dL' },
    { code: '787-2', loinc: '787-2', unit: 'fL' },
  ]),
  options: {},
};

/** An equipment status message (ESU^U01, HL7 v2.5 Chapter 13): journaled and acknowledged, no results. */
export const statusMessage: Hl7Fixture = {
  name: 'ESU^U01 equipment status',
  payload: segments(
    'MSH|^~\\&|DxH|HEME-1|LIS||20241029090000||ESU^U01^ESU_U01|DXH-7782|P|2.5',
    'EQU|DXH-01^Beckman^DxH 800|20241029090000|OP^Operational^HL70365',
  ),
  profile: hematology25.profile,
  options: {},
};

/** Every source above. */
export const allFixtures: Hl7Fixture[] = [mindrayBs, mindrayBsQc, radiometerAbl, lri251, hematology25, statusMessage];
