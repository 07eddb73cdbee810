/**
 * Structured logs (pino). Secrets never reach a log line: request headers are not
 * logged at all, and the redaction list catches credential-bearing fields should a
 * caller ever pass them in an object.
 */
import { chownSync, closeSync, existsSync, fchmodSync, fchownSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type LogFn, type Logger } from 'pino';
import { LineBatch } from './log-batch.js';

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

/** The `log` section of the configuration (src/config/sections/server.ts). */
export interface LogSettings {
  readonly level: string;
  readonly file?: string | undefined;
  /** Group that may read the file (a name or gid), resolved by the caller into `LogFileAccess`. */
  readonly group?: string | undefined;
  /** Lines below warn gathered up to this many bytes before a write (0: each line at once). */
  readonly bufferBytes?: number;
  readonly flushMilliseconds?: number;
}

/**
 * Who may read the log file. Its lines name every DN, job id and remote address, so it is
 * the service's alone (0600) or, with `log.group`, also that group's (0640); never the
 * world's, and so never a job's.
 */
export interface LogFileAccess {
  /** The gid of `log.group`; undefined: nobody but the service reads the log. */
  readonly gid?: number | undefined;
}

export function logFileMode(a: LogFileAccess): number {
  return a.gid === undefined ? 0o600 : 0o640;
}

/**
 * Opens the log file (creating it with its mode) and sets its group and mode through the
 * descriptor. Run at every start, so an older log (0644, as earlier versions and most
 * tools make files) is narrowed, and before every reopen, so the file logrotate's
 * `create` just made (0644 unless told otherwise) is narrowed before a line goes to it.
 * The mode goes to 0600 first: a file of a wrong group is never group-readable meanwhile.
 * Only a regular file is changed: a log sent to a device (`/dev/null`, `/dev/stderr`) is
 * left as it is, or every user of the machine would lose it.
 */
export function secureLogFile(file: string, a: LogFileAccess): void {
  const fd = openSync(file, 'a', logFileMode(a));
  try {
    if (!fstatSync(fd).isFile()) return;
    fchmodSync(fd, 0o600);
    if (a.gid !== undefined) {
      fchownSync(fd, fstatSync(fd).uid, a.gid);
      fchmodSync(fd, logFileMode(a));
    }
  } finally {
    closeSync(fd);
  }
}

/** pino's number for `warn`: from it up, a line is written at once. */
const WARN = 40;

/**
 * The log file, opened once now: the destination opens it again asynchronously, and a
 * file it cannot open was only an 'error' event after the service had started, every line
 * lost. Throws (ENOENT, EACCES, EISDIR, ...) so that `serve` refuses to start and says why.
 * Folders it makes are as private as the file (0700, or 0750 and the group's).
 */
function checkLogFile(file: string, a: LogFileAccess): void {
  // The missing folders one by one: Node's recursive mkdir loops forever on a parent that
  // answers ENOENT while it exists (/proc).
  const missing: string[] = [];
  for (let d = dirname(file); !existsSync(d) && dirname(d) !== d; d = dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    mkdirSync(d, { mode: a.gid === undefined ? 0o700 : 0o750 });
    if (a.gid !== undefined) chownSync(d, -1, a.gid);
  }
  secureLogFile(file, a);
}

/** Shortest time between two reports of failed log writes on standard error. */
const ERROR_REPORT_MS = 10_000;

/**
 * A failed write or reopen of the log (a full disk; after log rotation, a path that can no
 * longer be opened) was an unhandled 'error' event: it ended the service. The destination
 * keeps the file it had open when a reopen fails, so lines go on there; each failure is
 * reported on standard error, at most once per ERROR_REPORT_MS with the count of those
 * not reported since. (Not through the logger itself: its lines may be what fails.)
 */
export function reportLogErrors(
  dest: { on(event: 'error', f: (e: Error) => void): unknown },
  file: string | undefined,
  now: () => number = Date.now,
  write: (line: string) => void = (line) => process.stderr.write(line),
): void {
  let lastAt = -Infinity;
  let unreported = 0;
  dest.on('error', (e: Error) => {
    const at = now();
    if (at - lastAt < ERROR_REPORT_MS) {
      unreported++;
      return;
    }
    const more = unreported > 0 ? ` (and ${unreported} more since the last report)` : '';
    const target = file === undefined ? 'on standard output' : `file ${file}`;
    const after = file === undefined ? '' : '; lines go on to the file open before';
    write(`ceres: log ${target}: ${e.message}${more}${after}\n`);
    lastAt = at;
    unreported = 0;
  });
}

/**
 * The file is opened asynchronously; pino flushes its destination synchronously at exit,
 * which throws while the open is pending ("sonic boom is not ready yet"). A start that
 * fails that early (the state directory in use) then printed that as a second line after
 * its one line of reason. Before the open there is no file a synchronous flush could write to.
 */
function flushOnlyOnceOpen(dest: { flushSync(): void; once(event: 'ready', f: () => void): unknown }): void {
  let open = false;
  dest.once('ready', () => (open = true));
  const flushSync = dest.flushSync.bind(dest);
  dest.flushSync = () => {
    if (open) flushSync();
  };
}

export function createLogger(settings: LogSettings, access: LogFileAccess = {}): Logger {
  if (settings.file !== undefined) checkLogFile(settings.file, access);
  const dest =
    settings.file !== undefined
      ? pino.destination({ dest: settings.file, mkdir: true, sync: false, mode: logFileMode(access) })
      : pino.destination({ fd: 1, sync: false });
  reportLogErrors(dest, settings.file);
  if (settings.file !== undefined) flushOnlyOnceOpen(dest);
  const options = { level: settings.level, redact: { paths: REDACT, censor: '[redacted]' }, base: { svc: 'ceres' } };
  const bufferBytes = settings.bufferBytes ?? 0;
  if (bufferBytes <= 0) return pino(options, dest);
  const batch = new LineBatch(dest, bufferBytes, settings.flushMilliseconds ?? 200);
  // pino writes its own destination synchronously at exit; the batch is in front of it.
  process.once('exit', () => batch.flushSync());
  return pino(
    {
      ...options,
      hooks: {
        logMethod(this: Logger, args: Parameters<LogFn>, method: LogFn, level: number): void {
          method.apply(this, args);
          if (level >= WARN) batch.flush();
        },
      },
    },
    batch,
  );
}

/**
 * Reopen the log file (SIGHUP after logrotate renamed it): later lines go to a new file
 * at the configured path, given the log's mode and group first (`secureLogFile`). Standard
 * output is left as it is. A file that cannot be secured is reported on standard error
 * (`report`); the reopen still runs and reports its own failure.
 */
export function reopenLogFile(
  log: Logger,
  file: string | undefined,
  access: LogFileAccess = {},
  report: (line: string) => void = (line) => process.stderr.write(line),
): void {
  if (file === undefined) return;
  try {
    secureLogFile(file, access);
  } catch (e) {
    report(`ceres: log file ${file}: cannot set its mode and group: ${(e as Error).message}\n`);
  }
  const dest = (log as unknown as Record<symbol, { reopen?: () => void }>)[pino.symbols.streamSym];
  dest?.reopen?.();
}
