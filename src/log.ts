// The one logger shape every part takes. The composition root builds one pino root (logger.ts) and hands each part a
// child; pino's Logger satisfies this interface, as do LogSummary and the tests' recording loggers, so no part needs
// pino's types or a logger shape of its own.

/** A structured logger: an object of fields, then the message. Never patient data or secrets in either. */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  fatal(obj: object, msg?: string): void;
}

const ignore = (): void => {};

/** A logger that writes nothing (a part's default when none is injected). */
export const silentLog: Log = { debug: ignore, info: ignore, warn: ignore, error: ignore, fatal: ignore };
