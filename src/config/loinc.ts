// What a person types as a LOINC: a LOINC code (LOINC Users' Guide 12 C: digits, a dash and a Mod 10 check digit), or
// a laboratory's own code for an analyte LOINC has none for, which the Users' Guide reserves a leading X for. The
// check digit catches most typing slips (a wrong digit, two digits swapped) before a result is keyed on a wrong code.

/** A code read: a LOINC, a local X code, or why it is neither. */
export type LoincReading = { kind: 'loinc'; code: string } | { kind: 'local'; code: string } | { kind: 'invalid'; reason: string };

const LOINC = /^(\d{1,7})-(\d)$/;
const LOCAL = /^X[A-Za-z0-9._-]{1,63}$/;

/** The Mod 10 check digit of a LOINC's number part (Users' Guide 12 C; the Luhn algorithm). */
export function loincCheckDigit(digits: string): number {
  let sum = 0;
  [...digits].reverse().forEach((c, i) => {
    const d = Number(c);
    // Odd positions from the right are doubled, and the digits of the double added.
    sum += i % 2 === 0 ? Math.floor((2 * d) / 10) + ((2 * d) % 10) : d;
  });
  return (10 - (sum % 10)) % 10;
}

/** Reads a LOINC as typed on a form; the reason says what is wrong in a technician's words. */
export function readLoinc(text: string): LoincReading {
  const code = text.trim();
  if (code === '') return { kind: 'invalid', reason: 'enter the LOINC (such as 2345-7)' };
  const m = LOINC.exec(code);
  if (m) {
    const expected = loincCheckDigit(m[1]!);
    if (expected === Number(m[2])) return { kind: 'loinc', code };
    return { kind: 'invalid', reason: `${code} is not a LOINC: its check digit should be ${expected} (${m[1]}-${expected}); check for a typing slip` };
  }
  if (LOCAL.test(code)) return { kind: 'local', code };
  return { kind: 'invalid', reason: 'expected a LOINC such as 2345-7 (digits, a dash and the check digit), or a local code starting with X' };
}

/** Warnings for mappings whose LOINC is shaped like one but fails its check digit (`check-config` prints them; the page refuses them). */
export function loincWarnings(instruments: readonly { mapping: readonly { loinc: string }[] }[]): { path: string; message: string }[] {
  return instruments.flatMap((instrument, i) =>
    instrument.mapping.flatMap((m, j) => {
      const read = readLoinc(m.loinc);
      return LOINC.test(m.loinc.trim()) && read.kind === 'invalid' ? [{ path: `instruments[${i}].mapping[${j}].loinc`, message: read.reason }] : [];
    }),
  );
}
