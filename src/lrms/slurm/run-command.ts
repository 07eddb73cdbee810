/**
 * Runs Slurm's command-line tools (sbatch, squeue, scancel, scontrol, sinfo): never
 * through a shell, each run bounded by a timeout, with the configured SLURM_CONF, and
 * retried with exponential backoff while the failure looks transient (slurmctld down or
 * busy, a timeout). A permanent error (a bad partition, a refused time limit) is not
 * retried: waiting would not change Slurm's answer.
 */
import { execFile } from 'node:child_process';
import { Semaphore } from '../../staging/semaphore.js';
import { timedCommand, type BatchCommandObserver } from '../command-observer.js';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** A Slurm command that failed; `transient` when trying again later may succeed. */
export class SlurmCommandError extends Error {
  override readonly name = 'SlurmCommandError';
  constructor(
    message: string,
    readonly transient: boolean,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export interface RunnerOptions {
  /** Directory of the Slurm commands; empty: found on PATH. */
  readonly binDir: string;
  /** SLURM_CONF for every command; empty: inherited. */
  readonly slurmConf: string;
  readonly timeoutMs: number;
  /** Attempts of one command (the first included) while its failure is transient. */
  readonly attempts: number;
  /** First backoff; doubled after each failed attempt, capped at 30 s. */
  readonly backoffMs: number;
  /**
   * Slurm commands running at once. A burst of submissions then queues here instead of
   * starting hundreds of sbatch processes that compete for the CPU and for the
   * controller's RPC threads (each also holds a munge credential and a connection).
   */
  readonly maxConcurrent: number;
  readonly log?: { warn(obj: object, msg: string): void };
  /** Told of every run of a command (each attempt): its duration and whether it failed. */
  readonly commands?: BatchCommandObserver;
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

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class SlurmRunner {
  readonly #o: RunnerOptions;
  readonly #slots: Semaphore;
  constructor(options: RunnerOptions) {
    this.#o = options;
    this.#slots = new Semaphore(options.maxConcurrent);
  }

  /** `command` is a Slurm tool name (`sbatch`) or, with `prefix`, e.g. `runuser -u A --`. */
  async run(
    command: string,
    args: readonly string[],
    opts: { prefix?: readonly string[]; input?: string; attempts?: number } = {},
  ): Promise<CommandResult> {
    const attempts = opts.attempts ?? this.#o.attempts;
    let delay = this.#o.backoffMs;
    for (let i = 1; ; i++) {
      try {
        // Timed inside the slot: the duration is Slurm's, not the wait for a free slot.
        return await this.#slots.with(() =>
          timedCommand(this.#o.commands, command, () => this.#once(command, args, opts.prefix ?? [])),
        );
      } catch (e) {
        const err = e instanceof SlurmCommandError ? e : new SlurmCommandError(String(e), false);
        if (!err.transient || i >= attempts) throw err;
        this.#o.log?.warn(
          { command, attempt: i, of: attempts, retryInMs: delay, error: err.message },
          'slurm: command failed, retrying',
        );
        await sleep(delay);
        delay = Math.min(delay * 2, 30_000);
      }
    }
  }

  #once(command: string, args: readonly string[], prefix: readonly string[]): Promise<CommandResult> {
    const tool = this.#o.binDir ? `${this.#o.binDir}/${command}` : command;
    const argv = [...prefix, tool, ...args];
    // A minimal environment: sbatch hands its environment to the job (--export=ALL).
    const conf = this.#o.slurmConf || process.env.SLURM_CONF;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C',
      ...(conf ? { SLURM_CONF: conf } : {}),
    };
    return new Promise((resolve, reject) => {
      execFile(
        argv[0] as string,
        argv.slice(1),
        { env, timeout: this.#o.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (!error) return resolve({ stdout, stderr });
          const e = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
          if (e.killed || e.signal === 'SIGKILL') {
            return reject(
              new SlurmCommandError(`${command} did not answer within ${this.#o.timeoutMs} ms`, true, true),
            );
          }
          if (e.code === 'ENOENT') return reject(new SlurmCommandError(`${argv[0]} is not installed`, false));
          const msg = slurmMessage(stderr) || e.message;
          reject(new SlurmCommandError(`${command}: ${msg}`, isTransient(stderr)));
        },
      );
    });
  }
}
