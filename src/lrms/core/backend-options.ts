/**
 * The options every polling batch backend (Slurm, Grid Engine) takes beside its batch
 * system's own, and their defaults: one place, so that the backends agree on them.
 */
import { mkdir } from 'node:fs/promises';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { BackendLog } from './backend-log.js';
import type { BatchCommandObserver } from './command-observer.js';
import type { CommandRunnerOptions } from './run-command.js';
import { ensureWrapper, type WrapperKind } from './wrapper-build.js';

export interface PollingBackendOptions {
  /** The backend's own directory (the compiled wrapper lives in `bin/`; each job gets a link to it in its lrms directory). */
  readonly workDir: string;
  /** Directory of the batch system's commands; empty: PATH. */
  readonly binDir?: string;
  readonly jobNamePrefix?: string;
  readonly pollIntervalMs?: number;
  readonly commandTimeoutMs?: number;
  /** Attempts of a command (submit, cancel, ...) while the batch system is unreachable. */
  readonly commandAttempts?: number;
  readonly backoffMs?: number;
  /** The batch system's commands running at once. */
  readonly maxConcurrentCommands?: number;
  /** How old the cluster information (queues, job counts) may get before it is asked again. */
  readonly infoRefreshMs?: number;
  /** After the batch system says a started job ended, how long its status file may take to appear (shared file systems lag). */
  readonly statusGraceMs?: number;
  readonly wrapper?: 'auto' | WrapperKind;
  readonly compiler?: string;
  readonly jobPath?: string;
  readonly killGraceSeconds?: number;
  readonly sampleIntervalMs?: number;
  readonly switchUser?: 'runuser';
  /** Local accounts by name (default: the name service, cached a minute, never root). */
  readonly accounts?: AccountResolver;
  readonly log?: BackendLog;
  /** Where each batch command is reported (metrics: its duration, and whether it failed). */
  readonly commands?: BatchCommandObserver;
}

/** The options with a value that is not a default-free object. */
export type PollingSettings = Required<
  Omit<PollingBackendOptions, 'log' | 'wrapper' | 'compiler' | 'commands' | 'accounts'>
>;

export function pollingSettings(o: PollingBackendOptions): PollingSettings {
  return {
    workDir: o.workDir,
    binDir: o.binDir ?? '',
    jobNamePrefix: o.jobNamePrefix ?? 'ceres-',
    pollIntervalMs: o.pollIntervalMs ?? 1000,
    commandTimeoutMs: o.commandTimeoutMs ?? 30_000,
    commandAttempts: o.commandAttempts ?? 6,
    backoffMs: o.backoffMs ?? 1000,
    maxConcurrentCommands: o.maxConcurrentCommands ?? 4,
    infoRefreshMs: o.infoRefreshMs ?? 30_000,
    statusGraceMs: o.statusGraceMs ?? 10_000,
    jobPath: o.jobPath ?? '/usr/local/bin:/usr/bin:/bin',
    killGraceSeconds: o.killGraceSeconds ?? 10,
    sampleIntervalMs: o.sampleIntervalMs ?? 1000,
    switchUser: o.switchUser ?? 'runuser',
  };
}

/** The command runner's options (./run-command.ts) from the backend's. */
export function runnerOptions(s: PollingSettings, o: PollingBackendOptions): CommandRunnerOptions {
  return {
    binDir: s.binDir,
    timeoutMs: s.commandTimeoutMs,
    attempts: s.commandAttempts,
    backoffMs: s.backoffMs,
    maxConcurrent: s.maxConcurrentCommands,
    ...(o.log ? { log: o.log } : {}),
    ...(o.commands ? { commands: o.commands } : {}),
  };
}

/** The backend's work directory made and its job wrapper ready (compiled on first use); the wrapper's path. */
export async function prepareWorkDir(o: PollingBackendOptions, name: string): Promise<string> {
  await mkdir(o.workDir, { recursive: true });
  const wrapper = await ensureWrapper(o.workDir, o.wrapper ?? 'auto', o.compiler ?? 'cc', (why) =>
    o.log?.warn(
      { why },
      `${name} backend: C job wrapper unavailable, using the sh wrapper (reduced accounting, no memory limit)`,
    ),
  );
  return wrapper.path;
}
