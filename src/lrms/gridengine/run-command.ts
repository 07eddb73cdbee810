/**
 * Runs Grid Engine's commands (qsub, qstat, qdel, qacct, qhost) through the shared runner
 * (core/run-command.ts) with the cell's environment: every command needs SGE_ROOT,
 * SGE_CELL and, where the site moved them, the qmaster and execd ports.
 */
import { BatchCommandError, CommandRunner, type CommandRunnerOptions } from '../core/run-command.js';

export class GridEngineCommandError extends BatchCommandError {
  override readonly name = 'GridEngineCommandError';
}

export interface GridEngineCell {
  /** SGE_ROOT; empty: the service's environment. */
  readonly sgeRoot: string;
  /** SGE_CELL; empty: the service's environment (Grid Engine's default: `default`). */
  readonly sgeCell: string;
  /** SGE_QMASTER_PORT / SGE_EXECD_PORT; 0: the environment's (or /etc/services). */
  readonly qmasterPort: number;
  readonly execdPort: number;
}

/** What the commands print while the qmaster is down or busy. */
const TRANSIENT =
  /unable to contact qmaster|can't (?:connect|contact)|commlib error|unable to send message|got no connection|timeout|connection refused|no route to host|endpoint is not unique/i;

export const isTransient = (stderr: string): boolean => TRANSIENT.test(stderr);

/** The last meaningful line of the error output (`error: `, `denied: ` prefixes kept: they say who refused). */
export function geMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return (lines.at(-1) ?? '').slice(0, 300);
}

/** The environment every Grid Engine command runs with. */
export function cellEnv(c: GridEngineCell): Record<string, string> {
  const pick = (name: string, value: string): Record<string, string> => {
    const v = value || process.env[name];
    return v ? { [name]: v } : {};
  };
  return {
    ...pick('SGE_ROOT', c.sgeRoot),
    ...pick('SGE_CELL', c.sgeCell),
    ...pick('SGE_QMASTER_PORT', c.qmasterPort > 0 ? String(c.qmasterPort) : ''),
    ...pick('SGE_EXECD_PORT', c.execdPort > 0 ? String(c.execdPort) : ''),
  };
}

export class GridEngineRunner extends CommandRunner {
  constructor(options: CommandRunnerOptions, cell: GridEngineCell) {
    super(options, {
      name: 'gridengine',
      env: () => cellEnv(cell),
      transient: isTransient,
      message: geMessage,
      error: (message, transient, timedOut) => new GridEngineCommandError(message, transient, timedOut),
    });
  }
}
