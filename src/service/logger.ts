/**
 * Structured logs (pino). Secrets never reach a log line: request headers are not
 * logged at all, and the redaction list catches credential-bearing fields should a
 * caller ever pass them in an object.
 */
import { pino, type Logger } from 'pino';

export const REDACT = [
  'req.headers.authorization',
  'req.headers["x-delegation"]',
  'req.headers["x-token-delegation"]',
  'headers.authorization',
  'headers["x-delegation"]',
  'headers["x-token-delegation"]',
  '*.token',
  '*.privateKey',
  '*.keyPem',
  '*.proxyPem',
  'token',
  'privateKey',
  'keyPem',
  'proxyPem',
];

export function createLogger(level: string, file?: string): Logger {
  const dest =
    file !== undefined
      ? pino.destination({ dest: file, mkdir: true, sync: false })
      : pino.destination({ fd: 1, sync: false });
  return pino({ level, redact: { paths: REDACT, censor: '[redacted]' }, base: { svc: 'ceres' } }, dest);
}

/**
 * Reopen the log file (SIGHUP after logrotate renamed it): later lines go to a new file
 * at the configured path. Standard output is left as it is.
 */
export function reopenLogFile(log: Logger, file: string | undefined): void {
  if (file === undefined) return;
  const dest = (log as unknown as Record<symbol, { reopen?: () => void }>)[pino.symbols.streamSym];
  dest?.reopen?.();
}
