/**
 * Runs a batch system's command-line tools (sbatch, squeue, qsub, qstat, ...): never
 * through a shell, each run bounded by a timeout, with a minimal environment the backend
 * names, at most `maxConcurrent` at once, and retried with exponential backoff while the
 * failure looks transient (the controller down or busy, a timeout). A permanent error (a
 * bad queue, a refused time limit) is not retried: waiting would not change the answer.
 * What counts as transient and which line of its error output matters is the backend's.
 */
import { execFile } from 'node:child_process';
import { Semaphore } from '../../staging/semaphore.js';
import { timedCommand, type BatchCommandObserver } from './command-observer.js';

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** A batch system command that failed; `transient` when trying again later may succeed. */
export class BatchCommandError extends Error {
  override readonly name: string = 'BatchCommandError';
  constructor(
    message: string,
    readonly transient: boolean,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export interface CommandRunnerOptions {
  /** Directory of the commands; empty: found on PATH. */
  readonly binDir: string;
  readonly timeoutMs: number;
  /** Attempts of one command (the first included) while its failure is transient. */
  readonly attempts: number;
  /** First backoff; doubled after each failed attempt, capped at 30 s. */
  readonly backoffMs: number;
  /**
   * Commands running at once. A burst of submissions then queues here instead of
   * starting hundreds of processes that compete for the CPU and for the controller
   * (each also holds a credential and a connection).
   */
  readonly maxConcurrent: number;
  readonly log?: { warn(obj: object, msg: string): void };
  /** Told of every run of a command (each attempt): its duration and whether it failed. */
  readonly commands?: BatchCommandObserver;
}

/** What differs between batch systems: their environment, their words for "try again", their error lines. */
export interface CommandDialect {
  /** Names the runner in its log lines (`slurm`, `gridengine`). */
  readonly name: string;
  /** The variables every command gets besides PATH and LANG, computed at each run. */
  env(): Record<string, string>;
  /** Whether the error output says the failure may pass. */
  transient(stderr: string): boolean;
  /** The meaningful part of the error output, for logs and job errors. */
  message(stderr: string): string;
  /** The error class thrown (a subclass names the batch system). */
  error(message: string, transient: boolean, timedOut?: boolean): BatchCommandError;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class CommandRunner {
  readonly #o: CommandRunnerOptions;
  readonly #d: CommandDialect;
  readonly #slots: Semaphore;
  constructor(options: CommandRunnerOptions, dialect: CommandDialect) {
    this.#o = options;
    this.#d = dialect;
    this.#slots = new Semaphore(options.maxConcurrent);
  }

  /**
   * `command` is a tool name (`sbatch`) or, with `prefix`, e.g. `runuser -u A --`.
   * `signal`: while the command waits for a free slot, its firing takes it out of the queue
   * and the run rejects with the signal's reason; a command already started runs to its end.
   * `starting`: awaited in the slot right before each start of the command (a submission's
   * marker is written there, so a crash while it waits for its turn leaves none).
   */
  async run(
    command: string,
    args: readonly string[],
    opts: {
      prefix?: readonly string[];
      input?: string;
      attempts?: number;
      signal?: AbortSignal;
      starting?: () => Promise<void>;
    } = {},
  ): Promise<CommandResult> {
    const attempts = opts.attempts ?? this.#o.attempts;
    let delay = this.#o.backoffMs;
    for (let i = 1; ; i++) {
      try {
        // Timed inside the slot: the duration is the batch system's, not the wait for a free slot.
        return await this.#slots.with(async () => {
          await opts.starting?.();
          return timedCommand(this.#o.commands, command, () => this.#once(command, args, opts.prefix ?? []));
        }, opts.signal);
      } catch (e) {
        // Withdrawn before it started: nothing ran, nothing to retry.
        if (opts.signal?.aborted === true && e === opts.signal.reason) throw e;
        const err = e instanceof BatchCommandError ? e : this.#d.error(String(e), false);
        if (!err.transient || i >= attempts) throw err;
        this.#o.log?.warn(
          { command, attempt: i, of: attempts, retryInMs: delay, error: err.message },
          `${this.#d.name}: command failed, retrying`,
        );
        await sleep(delay);
        delay = Math.min(delay * 2, 30_000);
      }
    }
  }

  #once(command: string, args: readonly string[], prefix: readonly string[]): Promise<CommandResult> {
    const tool = this.#o.binDir ? `${this.#o.binDir}/${command}` : command;
    const argv = [...prefix, tool, ...args];
    // A minimal environment: a submission command may hand its environment to the job.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', ...this.#d.env() };
    return new Promise((resolve, reject) => {
      execFile(
        argv[0] as string,
        argv.slice(1),
        { env, timeout: this.#o.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (!error) return resolve({ stdout, stderr });
          const e = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null };
          if (e.killed || e.signal === 'SIGKILL') {
            return reject(this.#d.error(`${command} did not answer within ${this.#o.timeoutMs} ms`, true, true));
          }
          if (e.code === 'ENOENT') return reject(this.#d.error(`${argv[0]} is not installed`, false));
          const msg = this.#d.message(stderr) || e.message;
          reject(this.#d.error(`${command}: ${msg}`, this.#d.transient(stderr)));
        },
      );
    });
  }
}
