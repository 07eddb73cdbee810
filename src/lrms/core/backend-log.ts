/** Where problems a backend cannot hand to a caller are reported (pino-compatible). */
export interface BackendLog {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}
