// The one pino root (STYLE.md rule 10). Built by the composition root; every part gets a child logger.
// Redaction is declarative and applies to every child: secrets and patient fields never reach journald,
// even when a caller logs a whole object by mistake.
import { pino, type DestinationStream, type Level, type Logger } from 'pino';

/** Keys whose values are never logged: credentials, and anything that can carry patient demographics. */
export const redactedKeys = [
  // secrets
  'password',
  'secret',
  'clientSecret',
  'client_secret',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'authorization',
  'Authorization',
  'cookie',
  'set-cookie',
  'connectionString',
  // patient fields (ASTM P record, HL7 PID) and raw bytes that contain them
  'patient',
  'patientName',
  'patientId',
  'patient_name',
  'patient_id',
  'birthDate',
  'dateOfBirth',
  'dob',
  'address',
  'phone',
  'raw',
  'frame',
  'record',
  'payload',
] as const;

/** Paths pino redacts: each key at the top level and up to three levels deep. */
export const redactPaths: string[] = redactedKeys.flatMap((key) => {
  const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
  const join = (prefix: string): string => (k.startsWith('[') ? `${prefix}${k}` : prefix ? `${prefix}.${k}` : k);
  return [join(''), join('*'), join('*.*'), join('*.*.*')];
});

export interface LoggerOptions {
  level: Level;
  /** Gateway id, on every line (a lab ships many gateways' logs to one place). */
  gateway?: string;
  /** Where lines go; stdout (journald) when omitted. Tests pass a stream. */
  destination?: DestinationStream;
}

/**
 * Bytes of log lines held while stdout does not take them (journald stalled or restarting); lines beyond are dropped.
 * Without a bound the lines would pile up in memory for as long as the stall lasts.
 */
export const STDOUT_BUFFER_BYTES = 16 * 2 ** 20;

/** The root logger: JSON lines, ISO time, redaction on. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: options.gateway ? { gateway: options.gateway } : {},
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths, censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false, maxLength: STDOUT_BUFFER_BYTES }),
  );
}

/** The logger one instrument's supervisor and driver use. */
export function instrumentLogger(root: Logger, instrument: string): Logger {
  return root.child({ instrument });
}

/** The logger one sink and its drain use. */
export function sinkLogger(root: Logger, sink: string): Logger {
  return root.child({ sink });
}

export type { Logger };
