/** The slice of a pino logger staging uses; tests pass a silent one. Never log credentials or tokens. */
export interface StagingLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const nothing = (): void => undefined;
export const silentLogger: StagingLogger = { debug: nothing, info: nothing, warn: nothing, error: nothing };
