// The serial settings detection tries, in the order analyzers use them. Most RS-232 analyzers ship at 9600 8N1; the
// faster rates come next because a newer analyzer is usually configured faster, the slow ones last; then the same
// rates with 7 data bits and even parity (7E1), the usual alternative in older laboratory interfaces.

/** A UART setting: rate, data bits and parity; one stop bit (a receiver reads two stop bits as one and idle). */
export interface SerialSetting {
  baudRate: number;
  dataBits: 7 | 8;
  parity: 'none' | 'even' | 'odd';
}

/** What an instrument's transport fixes and what it leaves to detection. */
export interface DetectionScope {
  baudRate: number | 'auto';
  dataBits: 7 | 8 | 'auto';
  parity: 'none' | 'even' | 'odd' | 'auto';
}

/** Rates in the order they are tried. */
export const RATE_ORDER: readonly number[] = [9600, 19200, 38400, 57600, 115200, 4800, 2400, 1200];

const FORMATS: readonly Pick<SerialSetting, 'dataBits' | 'parity'>[] = [
  { dataBits: 8, parity: 'none' },
  { dataBits: 7, parity: 'even' },
];

/** Every setting the scope allows, in trial order (a fixed rate or format narrows the list). */
export function candidateSettings(scope: DetectionScope): SerialSetting[] {
  const rates = scope.baudRate === 'auto' ? RATE_ORDER : [scope.baudRate];
  const formats = formatsFor(scope);
  return formats.flatMap((format) => rates.map((baudRate) => ({ baudRate, ...format })));
}

function formatsFor(scope: DetectionScope): Pick<SerialSetting, 'dataBits' | 'parity'>[] {
  if (scope.dataBits !== 'auto' && scope.parity !== 'auto') return [{ dataBits: scope.dataBits, parity: scope.parity }];
  const fits = FORMATS.filter((f) => (scope.dataBits === 'auto' || f.dataBits === scope.dataBits) && (scope.parity === 'auto' || f.parity === scope.parity));
  if (fits.length > 0) return fits;
  // A fixed half the usual formats do not cover (8 data bits with parity, 7 without): take it with what varies.
  const dataBits = scope.dataBits === 'auto' ? (scope.parity === 'none' ? 8 : 7) : scope.dataBits;
  const parity = scope.parity === 'auto' ? (dataBits === 8 ? 'none' : 'even') : scope.parity;
  return [{ dataBits, parity }];
}

/** `9600 8N1`, `19200 7E1`: how manuals write a setting. */
export function settingLabel(s: SerialSetting): string {
  return `${s.baudRate} ${s.dataBits}${s.parity === 'none' ? 'N' : s.parity === 'even' ? 'E' : 'O'}1`;
}

/** True when both name the same setting. */
export function sameSetting(a: SerialSetting, b: SerialSetting): boolean {
  return a.baudRate === b.baudRate && a.dataBits === b.dataBits && a.parity === b.parity;
}

/** The detection scope of a transport, or null when its settings are all given (or it is not serial). */
export function detectionScope(transport: {
  kind: string;
  baudRate?: number | 'auto';
  dataBits?: 7 | 8 | 'auto';
  parity?: 'none' | 'even' | 'odd' | 'auto';
}): DetectionScope | null {
  if (transport.kind !== 'serial') return null;
  const scope: DetectionScope = { baudRate: transport.baudRate ?? 9600, dataBits: transport.dataBits ?? 8, parity: transport.parity ?? 'none' };
  return scope.baudRate === 'auto' || scope.dataBits === 'auto' || scope.parity === 'auto' ? scope : null;
}

/** The setting of a transport that needs no detection. */
export function fixedSetting(scope: DetectionScope): SerialSetting | null {
  const { baudRate, dataBits, parity } = scope;
  return baudRate === 'auto' || dataBits === 'auto' || parity === 'auto' ? null : { baudRate, dataBits, parity };
}
