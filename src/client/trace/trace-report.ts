/**
 * A trace as a person reads it (one line per step as it ends, the job's state changes
 * under the run step, the failure's remedy under it) or as a program reads it (`--json`:
 * the whole report at the end). Neither ever holds a token or a key: steps describe
 * credentials by their claims and subjects only.
 */
import type { TraceReport } from './trace.js';
import type { StateChange } from './trace-job.js';
import type { StepResult } from './step.js';

const MARK = { ok: 'ok', failed: 'FAILED', skipped: 'skipped' } as const;

export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function stepLine(r: StepResult): string {
  const head = `${MARK[r.status].padEnd(8)}${r.step.padEnd(15)}${duration(r.ms).padStart(8)}  ${r.detail}`;
  return r.remedy === undefined || r.status !== 'failed' ? head : `${head}\n${' '.repeat(33)}remedy: ${r.remedy}`;
}

/** A state change under the step following the job; the dry-run job's are marked. */
export function stateLine(s: StateChange, dryRun = false): string {
  return `${' '.repeat(23)}${`+${duration(s.atMs)}`.padStart(8)}  ${s.state}${dryRun ? ' (dry run)' : ''}`;
}

export function summaryLine(r: TraceReport): string {
  if (r.failure === undefined) return `trace passed: ${r.steps.length} steps in ${duration(r.ms)}`;
  const left = r.job?.leftOnCe === true ? ` (job ${r.job.id} is left on the CE)` : '';
  return `trace failed at step ${r.failure.step}: ${r.failure.reason}${left}`;
}

/** The `--json` document: stable names, times in milliseconds. */
export function reportJson(r: TraceReport): string {
  return `${JSON.stringify(
    {
      url: r.url,
      ok: r.ok,
      version: r.version ?? null,
      failure: r.failure ?? null,
      steps: r.steps.map((s) => ({
        step: s.step,
        status: s.status,
        ms: Math.round(s.ms),
        detail: s.detail,
        ...(s.remedy === undefined ? {} : { remedy: s.remedy }),
      })),
      job:
        r.job === undefined
          ? null
          : {
              id: r.job.id,
              states: r.job.states.map((s) => ({ state: s.state, ms: Math.round(s.atMs) })),
              exitCode: r.job.exitCode ?? null,
              localOwner: r.job.localOwner ?? null,
              leftOnCe: r.job.leftOnCe === true,
            },
      ms: Math.round(r.ms),
    },
    null,
    2,
  )}\n`;
}
