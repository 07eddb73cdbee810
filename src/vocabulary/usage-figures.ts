/**
 * The figures of a job's end that a batch backend reports (exit code and usage), named
 * once, for saying which of them only the job itself reported. Under Slurm the job
 * wrapper runs as the job's own account: a job can stop it and write its status file,
 * so every figure that came from that file rather than from Slurm's own measurement is
 * one the job could have forged. The backend lists those; the engine keeps the list
 * with the usage, the accounting record and the ComputingActivity publish it
 * (docs/security.md, "What a site can trust in accounting"). A leaf: imports nothing.
 */
export const USAGE_FIGURES = ['exitCode', 'wallTime', 'cpuTime', 'maxRss', 'startTime', 'endTime', 'nodes'] as const;
export type UsageFigure = (typeof USAGE_FIGURES)[number];

const KNOWN: ReadonlySet<string> = new Set(USAGE_FIGURES);

/** The figures named in `v` (a stored list), in the vocabulary's order; anything else is dropped. */
export function usageFigures(v: unknown): UsageFigure[] {
  if (!Array.isArray(v)) return [];
  const named = new Set(v.filter((x): x is string => typeof x === 'string' && KNOWN.has(x)));
  return USAGE_FIGURES.filter((f) => named.has(f));
}

/**
 * The GLUE2 ComputingActivity elements that carry each figure, for the `ReportedByJob=`
 * OtherInfo entry (a reader sees which published values only the job vouches for).
 */
export const GLUE2_FIGURE_ELEMENTS: Readonly<Record<UsageFigure, string>> = {
  exitCode: 'ExitCode',
  wallTime: 'UsedTotalWallTime',
  cpuTime: 'UsedTotalCPUTime',
  maxRss: 'UsedMainMemory',
  startTime: 'StartTime',
  endTime: 'ComputingManagerEndTime',
  nodes: 'ExecutionNode',
};
