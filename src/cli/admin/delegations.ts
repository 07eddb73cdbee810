/** `ceres admin delegations list|show|revoke`: delegated credentials of every owner. */
import type { Command } from 'commander';
import { delegationJobs, getDelegation, listDelegations } from '../../admin/job-queries.js';
import { AdminError } from '../../admin/state-db.js';
import { globals, print, printJson, withDb } from './context.js';
import { report, runRequests } from './job-actions.js';
import { iso, table } from './table.js';

export function registerDelegationCommands(admin: Command): void {
  const d = admin.command('delegations').description('delegated credentials (any owner)');
  d.command('list')
    .description('list delegations')
    .option('--owner <text>', 'owner DN contains this text')
    .action(async (opts: { owner?: string }, cmd: Command) => {
      const o = globals(cmd);
      const rows = await withDb(o, (db) => listDelegations(db, opts.owner));
      if (o.json) return printJson(rows);
      print(
        table(
          ['ID', 'TYPE', 'EXPIRES', 'JOBS', 'OWNER'],
          rows.map((r) => [r.id, r.type, iso(r.expiresAt), String(r.jobs), r.owner]),
        ),
      );
      print(`${rows.length} delegation(s)`);
    });
  d.command('show')
    .description('show one delegation and the jobs using it')
    .argument('<id>')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const out = await withDb(o, (db) => {
        const r = getDelegation(db, id);
        if (!r) throw new AdminError(`no delegation ${id}`);
        return { ...r, jobIds: delegationJobs(db, id) };
      });
      if (o.json) return printJson(out);
      print(
        table(
          ['FIELD', 'VALUE'],
          [
            ['id', out.id],
            ['owner', out.owner],
            ['type', out.type],
            ['expires', iso(out.expiresAt)],
            ['created', iso(out.createdAt)],
            ['updated', iso(out.updatedAt)],
            ['jobs', out.jobIds.join(', ') || '-'],
          ],
        ),
      );
    });
  d.command('revoke')
    .description('remove delegations (refused while a job that has not ended uses one)')
    .argument('<id...>')
    .option('--wait <seconds>', 'how long to wait for the service to answer (default 30)', '30')
    .action(async (ids: string[], opts: { wait: string }, cmd: Command) => {
      const o = globals(cmd);
      const out = await withDb(o, (db, stateDir) =>
        runRequests(
          db,
          stateDir,
          'revoke-delegation',
          ids,
          (id) => getDelegation(db, id) !== undefined,
          'Delegation not found',
          opts.wait,
        ),
      );
      report(out, o.json === true);
    });
}
