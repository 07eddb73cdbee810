/** `ceres admin list` and `ceres admin show JOBID`: jobs of every owner, from the database. */
import { loadConfig } from '../../config/load.js';
import { countsFromRows, waitReason } from '../../jobs/wait-reason.js';
import { activeJobCounts } from '../../store/wait-counts.js';
import type { Command } from 'commander';
import { jobFilter } from '../../admin/filters.js';
import { getJob, jobDelegations, listJobs } from '../../admin/job-queries.js';
import { AdminError } from '../../admin/state-db.js';
import { fromRow, type AccountingRow } from '../../accounting/record.js';
import { globals, print, printJson, withDb } from './context.js';
import { age, iso, table } from './table.js';

export function registerJobCommands(admin: Command): void {
  admin
    .command('list')
    .description('list jobs of all owners (oldest first)')
    .option('--owner <text>', 'owner DN contains this text')
    .option('--state <states>', 'REST states, comma-separated (e.g. RUNNING,QUEUING)')
    .option('--queue <name>', 'queue')
    .option('--older-than <age>', 'submitted at least this long ago (90s, 30m, 12h, 7d, 2w)')
    .option('--newer-than <age>', 'submitted at most this long ago')
    .option('--limit <n>', 'at most this many jobs (default 1000)')
    .action(async (opts: Record<string, string>, cmd: Command) => {
      const o = globals(cmd);
      const filter = jobFilter(opts);
      const jobs = await withDb(o, (db) => listJobs(db, filter));
      if (o.json) return printJson(jobs);
      const now = Date.now();
      print(
        table(
          ['ID', 'STATE', 'QUEUE', 'AGE', 'OWNER'],
          jobs.map((j) => [j.id, j.state, j.queue || '-', age(now - j.createdAt), j.owner]),
        ),
      );
      print(
        `${jobs.length} job(s)${jobs.length === filter.limit ? ` (limit ${filter.limit} reached: narrow the filter or raise --limit)` : ''}`,
      );
    });

  admin
    .command('show')
    .description('show one job in full (any owner)')
    .argument('<jobid>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const config = loadConfig(o.config, { stateDir: o.stateDir });
      const out = await withDb(o, (db) => {
        const j = getJob(db, id);
        if (!j) throw new AdminError(`no job ${id}`);
        const accounting = (
          db.prepare('SELECT * FROM accounting_records WHERE job_id = ? ORDER BY ended_at').all(id) as AccountingRow[]
        ).map(fromRow);
        return {
          id: j.id,
          owner: j.ownerDn,
          ownerKey: j.owner,
          localAccount: j.localAccount,
          fqans: j.fqans,
          state: j.restState,
          internalState: j.state + (j.pending ? ' (pending)' : ''),
          lrmsState: j.lrmsState,
          queue: j.queue,
          route: j.route?.name ?? null,
          waiting: waitReason(j, config, countsFromRows(activeJobCounts(db))) ?? null,
          localId: j.localId,
          exitCode: j.exitCode,
          failureReason: j.failureReason,
          submitted: iso(j.createdAt),
          started: iso(j.startedAt),
          ended: iso(j.endedAt),
          eraseAt: iso(j.eraseAt),
          requests: { kill: j.killRequested, clean: j.cleanRequested, restart: j.restartRequested },
          rerunsLeft: j.rerunsLeft,
          clientHost: j.clientHost,
          delegations: jobDelegations(db, j.id),
          usage: j.engine.usage ?? null,
          accounting,
        };
      });
      if (o.json) return printJson(out);
      const rows: [string, string][] = Object.entries(out)
        .filter(([k]) => k !== 'accounting' && k !== 'usage' && k !== 'requests')
        .map(([k, v]) => [
          k,
          v === null ? '-' : Array.isArray(v) ? (v as string[]).join(', ') || '-' : String(v as string | number),
        ]);
      rows.push([
        'requests',
        Object.entries(out.requests)
          .filter(([, v]) => v)
          .map(([k]) => k)
          .join(', ') || '-',
      ]);
      if (out.usage) rows.push(['usage', JSON.stringify(out.usage)]);
      rows.push([
        'accounting',
        out.accounting.length ? out.accounting.map((a) => `${a.finalState} ended ${iso(a.endedAt)}`).join('; ') : '-',
      ]);
      print(table(['FIELD', 'VALUE'], rows));
    });
}
