/**
 * Runs Slurm's command-line tools (sbatch, squeue, scancel, scontrol, sinfo) through the
 * shared runner (core/run-command.ts: no shell, timeouts, backoff, a concurrency bound)
 * with the configured SLURM_CONF, Slurm's words for a transient failure, and its
 * `error:` lines as the message.
 */
import {
  BatchCommandError,
  CommandRunner,
  type CommandResult,
  type CommandRunnerOptions,
} from '../core/run-command.js';

export type { CommandResult };

/** A Slurm command that failed; `transient` when trying again later may succeed. */
export class SlurmCommandError extends BatchCommandError {
  override readonly name = 'SlurmCommandError';
}

export interface RunnerOptions extends CommandRunnerOptions {
  /** SLURM_CONF for every command; empty: inherited. */
  readonly slurmConf: string;
}

/** Messages Slurm prints when the controller is down, restarting or overloaded. */
const TRANSIENT =
  /Unable to contact slurm controller|Socket timed out|Connection refused|Zero Bytes were transmitted|temporarily unavailable|Resource temporarily|try again|Transport endpoint|Slurm backup controller in standby|communication connection failure|Unexpected message received|Connection reset|Too many pending jobs|slurm_receive_msg|Communication connection failure|Address already in use|Job submit\/allocate failed: Socket/i;

export function isTransient(stderr: string): boolean {
  return TRANSIENT.test(stderr);
}

/** The last meaningful line Slurm printed (its `error:` lines), for logs and job errors. */
export function slurmMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.replace(/^\w+: error: /, '').trim())
    .filter((l) => l !== '');
  return (lines.at(-1) ?? '').slice(0, 300);
}

export class SlurmRunner extends CommandRunner {
  constructor(options: RunnerOptions) {
    super(options, {
      name: 'slurm',
      env: (): Record<string, string> => {
        const conf = options.slurmConf || process.env.SLURM_CONF;
        return conf ? { SLURM_CONF: conf } : {};
      },
      transient: isTransient,
      message: slurmMessage,
      error: (message, transient, timedOut) => new SlurmCommandError(message, transient, timedOut),
    });
  }
}
