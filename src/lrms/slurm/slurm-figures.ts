/**
 * A job's end as Ceres reports it under Slurm: the job wrapper's status file, corrected by
 * what Slurm measured itself. The wrapper runs as the job's account (the batch script
 * runs there, and execs it), so a job can stop it and write the status file with any exit
 * code and usage: every figure the file alone gives is the job's word. Slurm's own
 * figures come from its controller (`scontrol show job`: run time, start and end, nodes,
 * the batch step's exit code and the signal that ended it) and, where the site keeps
 * accounting in slurmdbd, from `sacct` (those and the CPU time and largest resident set
 * its job accounting gathered). Slurm's figures win; whatever only the file gave is
 * listed in `jobReported` (docs/security.md, "What a site can trust in accounting").
 *
 * The exit code: the batch step is the wrapper, which exits 0 after writing the file, so
 * Slurm's exit code says nothing about the job's and the job's own stays its word. The
 * signal that ended the step is Slurm's observation: a wrapper killed by a signal did not
 * write the file it left, so the job's report is replaced by that signal.
 * Pure: no I/O.
 */
import { constants as os } from 'node:os';
import type { BatchResult } from '../backend.js';
import { USAGE_FIGURES, type UsageFigure } from '../../vocabulary/usage-figures.js';
import type { JobRecord } from './scontrol.js';

/** What Slurm measured: the controller's record, with the accounting figures where sacct gave them. */
export interface SlurmFigures extends JobRecord {
  readonly maxRssBytes?: number | undefined;
  readonly userCpuSeconds?: number | undefined;
  readonly systemCpuSeconds?: number | undefined;
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(os.signals).map(([name, n]) => [n, name]));

/** `SIGKILL` for 9; `signal 64` for a number Node does not name. */
export function signalName(n: number): string {
  return SIGNAL_NAMES.get(n) ?? `signal ${n}`;
}

/** Every figure of the wrapper's report is the job's word: Slurm could not be asked. */
export function jobReportedOnly(own: BatchResult): BatchResult {
  return { ...own, jobReported: [...USAGE_FIGURES] };
}

/** The wrapper's report `own` with Slurm's figures `s` where it has them; undefined: none. */
export function withSlurmFigures(own: BatchResult, s: SlurmFigures | undefined): BatchResult {
  if (s === undefined) return jobReportedOnly(own);
  const marked = new Set<UsageFigure>();
  const pick = <T>(figure: UsageFigure, slurm: T | undefined, mine: T): T => {
    if (slurm !== undefined) return slurm;
    marked.add(figure);
    return mine;
  };
  const started = s.start !== null;
  const cpu =
    s.userCpuSeconds !== undefined && s.systemCpuSeconds !== undefined
      ? { user: s.userCpuSeconds, kernel: s.systemCpuSeconds }
      : undefined;
  const mine = { user: own.userTimeSeconds, kernel: own.kernelTimeSeconds };
  const times = pick('cpuTime', cpu, mine);
  const result: BatchResult = {
    ...own,
    wallTimeSeconds: pick('wallTime', started ? s.runSeconds : undefined, own.wallTimeSeconds),
    userTimeSeconds: times.user,
    kernelTimeSeconds: times.kernel,
    cpuTimeSeconds: times.user + times.kernel,
    maxRssBytes: pick('maxRss', s.maxRssBytes, own.maxRssBytes),
    startTime: pick('startTime', s.start ?? undefined, own.startTime),
    endTime: pick('endTime', s.end ?? undefined, own.endTime),
    nodes: pick('nodes', s.nodes.length > 0 ? s.nodes : undefined, own.nodes),
  };
  if (s.signal > 0) {
    const name = signalName(s.signal);
    return {
      ...result,
      exitCode: 128 + s.signal,
      signal: name,
      // A reason the wrapper gave (a limit it enforced, a cancel) stays; otherwise say what Slurm saw.
      failureReason:
        own.failureReason ?? `the job wrapper was ended by ${name} before it reported; Slurm's record is used`,
      jobReported: USAGE_FIGURES.filter((f) => marked.has(f)),
    };
  }
  marked.add('exitCode');
  return { ...result, jobReported: USAGE_FIGURES.filter((f) => marked.has(f)) };
}
