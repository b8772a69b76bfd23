// Is a unit text a UCUM expression? The syntax of UCUM (the Unified Code for Units of Measure, section 2: terms
// joined by `.` and `/`, exponents, factors, `{annotations}`, prefixes on metric atoms only), over the atoms that
// laboratory medicine reports in. A unit that does not pass is never sent as a UCUM code: the Observation then
// carries the analyzer's text as it is (fhir-observation.ts). Pure.

// Metric atoms (take a prefix): base and derived SI units and those UCUM marks metric.
const METRIC = new Set([
  'm',
  's',
  'g',
  'rad',
  'K',
  'C',
  'cd',
  'mol',
  'sr',
  'Hz',
  'N',
  'Pa',
  'J',
  'W',
  'A',
  'V',
  'F',
  'Ohm',
  'S',
  'Wb',
  'Cel',
  'T',
  'H',
  'lm',
  'lx',
  'Bq',
  'Gy',
  'Sv',
  'l',
  'L',
  'ar',
  't',
  'bar',
  'u',
  'eV',
  'eq',
  'osm',
  'kat',
  'U',
  '[IU]',
  '[iU]',
  'Ci',
  'R',
  'RAD',
  'REM',
  'G',
  'cal',
  'bit',
  'By',
  'Bd',
  'mho',
  'st',
  'm[Hg]',
  'm[H2O]',
  'g%',
  'P',
  'St',
  'Np',
  'B',
]);
// Atoms without prefixes.
const PLAIN = new Set([
  '10*',
  '10^',
  '%',
  '[ppth]',
  '[ppm]',
  '[ppb]',
  '[pptr]',
  'min',
  'h',
  'd',
  'wk',
  'mo',
  'a',
  "'",
  "''",
  'deg',
  '[pH]',
  "[arb'U]",
  "[USP'U]",
  '[drp]',
  '[HPF]',
  '[LPF]',
  '[CFU]',
  '[PFU]',
  '[FFU]',
  "[todd'U]",
  "[beth'U]",
  "[MPL'U]",
  "[GPL'U]",
  "[APL'U]",
  "[ka'U]",
  "[knk'U]",
  "[mclg'U]",
  "[tb'U]",
  '[BAU]',
  '[AU]',
  '[PNU]',
  '[Lf]',
  "[D'ag'U]",
  '[ELU]',
  '[EID_50]',
  '[TCID_50]',
  '[CCID_50]',
  '[IR]',
  '[degF]',
  '[in_i]',
  '[ft_i]',
  '[lb_av]',
  '[oz_av]',
  '[gr]',
  '[S]',
  '[HnsU]',
  "[hnsf'U]",
  '[mesh_i]',
  '[Ch]',
  '[diop]',
  '[drp]',
  '[car_m]',
  '[sft_i]',
  '[iU]',
]);
const PREFIXES = ['da', 'Ki', 'Mi', 'Gi', 'Ti', 'Y', 'Z', 'E', 'P', 'T', 'G', 'M', 'k', 'h', 'd', 'c', 'm', 'u', 'n', 'p', 'f', 'a', 'z', 'y'];

/** True when `unit` is a valid UCUM expression (case-sensitive, as UCUM's c/s form is). */
export function isUcum(unit: string): boolean {
  if (unit.length === 0 || unit.length > 64 || /\s/.test(unit)) return false;
  const parser = { text: unit, at: 0 };
  if (parser.text.startsWith('/')) parser.at = 1;
  return term(parser) && parser.at === parser.text.length;
}

interface Parser {
  text: string;
  at: number;
}

function term(p: Parser): boolean {
  if (!component(p)) return false;
  while (p.text[p.at] === '.' || p.text[p.at] === '/') {
    p.at++;
    if (!component(p)) return false;
  }
  return true;
}

function component(p: Parser): boolean {
  if (p.text[p.at] === '(') {
    p.at++;
    if (!term(p) || p.text[p.at] !== ')') return false;
    p.at++;
    return true;
  }
  if (p.text[p.at] === '{') return annotation(p);
  const start = p.at;
  while (p.at < p.text.length && !'./(){}'.includes(p.text[p.at]!)) {
    // A bracketed atom part such as [Hg] or [arb'U] may hold any printable character but `]`.
    if (p.text[p.at] === '[') p.at = Math.max(p.text.indexOf(']', p.at), p.at);
    p.at++;
  }
  const token = p.text.slice(start, p.at);
  if (token === '' || !(/^\d+$/.test(token) || annotatable(token))) return false;
  return p.text[p.at] === '{' ? annotation(p) : true;
}

function annotation(p: Parser): boolean {
  const end = p.text.indexOf('}', p.at);
  if (end < 0 || !/^[\x21-\x7a|~]*$/.test(p.text.slice(p.at + 1, end))) return false;
  p.at = end + 1;
  return true;
}

/** A simple unit with an optional signed exponent: `mmol`, `10*3`, `m2`, `s-1`. */
function annotatable(token: string): boolean {
  const m = /^(.*?)([+-]?\d+)?$/.exec(token)!;
  if (simpleUnit(token)) return true;
  return m[2] !== undefined && m[1] !== '' && simpleUnit(m[1]!);
}

function simpleUnit(token: string): boolean {
  if (METRIC.has(token) || PLAIN.has(token)) return true;
  return PREFIXES.some((prefix) => token.startsWith(prefix) && METRIC.has(token.slice(prefix.length)));
}
