// Exceptions are for bugs and start-up failures; callers match on the stable `code`.

/** Stable error codes; never renumber or reuse one. */
export type LabgateErrorCode =
  'CONFIG_INVALID' | 'CONFIG_UNREADABLE' | 'DATA_DIR_LOCKED' | 'STORE_MIGRATION_FAILED' | 'STORE_SCHEMA_NEWER' | 'STORE_UNAVAILABLE' | 'USAGE';

/** The one exception type labgate throws on purpose. */
export class LabgateError extends Error {
  readonly code: LabgateErrorCode;
  constructor(code: LabgateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LabgateError';
    this.code = code;
  }
}

/** True when `err` is a LabgateError with the given code. */
export function isLabgateError(err: unknown, code?: LabgateErrorCode): err is LabgateError {
  return err instanceof LabgateError && (code === undefined || err.code === code);
}
