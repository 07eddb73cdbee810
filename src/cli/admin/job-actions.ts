/**
 * `ceres admin kill|clean|restart JOBID...`: on behalf of the jobs' owners, through the
 * running service (src/admin/admin-requests.ts). Unknown ids are reported at once and
 * not recorded. Exit status 1 when any id was unknown or refused.
 */
import type { Command } from 'commander';
import { userInfo } from 'node:os';
import { getJob } from '../../admin/job-queries.js';
import { requestAndWait, type RequestOutcome } from '../../admin/request-client.js';
import type { AdminAction } from '../../admin/admin-requests.js';
import type { Db } from '../../store/database.js';
import { servicePid } from './service-state.js';
import { globals, print, printJson, withDb } from './context.js';
import { table } from './table.js';

export function registerJobActions(admin: Command): void {
  for (const [action, what] of [
    ['kill', 'kill jobs (any owner)'],
    ['clean', 'clean jobs: remove their files and records (once ended)'],
    ['restart', 'restart failed jobs'],
  ] as const) {
    admin
      .command(action)
      .description(what)
      .argument('<jobid...>')
      .option('--wait <seconds>', 'how long to wait for the service to answer (default 30)', '30')
      .action(async (ids: string[], opts: { wait: string }, cmd: Command) => {
        const o = globals(cmd);
        const out = await withDb(o, (db, stateDir) =>
          runRequests(db, stateDir, action, ids, (id) => getJob(db, id) !== undefined, 'Job not found', opts.wait),
        );
        report(out, o.json === true);
      });
  }
}

/** Shared by the job actions and `delegations revoke`. */
export async function runRequests(
  db: Db,
  stateDir: string,
  action: AdminAction,
  targets: string[],
  exists: (t: string) => boolean,
  missing: string,
  wait: string,
): Promise<RequestOutcome[]> {
  const waitS = Number(wait);
  if (!(waitS >= 0)) throw new Error(`--wait: '${wait}' is not a number of seconds`);
  const known = [...new Set(targets)].filter(exists);
  const answered = known.length
    ? await requestAndWait(db, action, known, {
        by: `${userInfo().username} (ceres admin)`,
        serviceRunning: servicePid(stateDir) !== undefined,
        waitMs: waitS * 1000,
      })
    : [];
  return targets.map((t) => answered.find((a) => a.target === t) ?? { target: t, status: 404, reason: missing });
}

export function report(out: RequestOutcome[], json: boolean): void {
  if (out.some((r) => r.status !== null && r.status >= 300)) process.exitCode = 1;
  if (json) return printJson(out);
  print(
    table(
      ['ID', 'STATUS', 'RESULT'],
      out.map((r) => [r.target, r.status === null ? 'recorded' : String(r.status), r.reason]),
    ),
  );
}
