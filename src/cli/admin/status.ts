/** `ceres admin status`: one screen on the service and its state directory. */
import type { Command } from 'commander';
import { statfsSync } from 'node:fs';
import { Drains, ALL_QUEUES } from '../../admin/drains.js';
import { serviceCounts } from '../../admin/job-queries.js';
import { servicePid } from './service-state.js';
import { globals, print, printJson, withDb } from './context.js';

export function registerStatus(admin: Command): void {
  admin
    .command('status')
    .description('service, drains, jobs per state and queue, delegations, accounting, disk')
    .action(async (_opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const out = await withDb(o, (db, stateDir) => {
        const pid = servicePid(stateDir);
        const fs = statfsSync(stateDir);
        return {
          stateDir,
          service: pid !== undefined ? { running: true, pid } : { running: false },
          draining: new Drains(db).list(),
          ...serviceCounts(db),
          disk: { freeBytes: fs.bavail * fs.bsize, totalBytes: fs.blocks * fs.bsize },
        };
      });
      if (o.json) return printJson(out);
      const gib = (b: number): string => `${(b / 2 ** 30).toFixed(1)} GiB`;
      const counts = (r: Record<string, number>): string =>
        Object.entries(r)
          .map(([k, n]) => `${k || '-'} ${n}`)
          .join(', ') || 'none';
      // A drain of the whole service stops every submission; drained queues stop theirs only.
      const whole = out.draining.find((d) => d.queue === ALL_QUEUES);
      const queues = out.draining
        .filter((d) => d.queue !== ALL_QUEUES)
        .map((d) => `queue ${d.queue} (draining: ${d.reason})`);
      const accepting =
        whole !== undefined
          ? `no, draining: service (${whole.reason})${queues.length > 0 ? `; also ${queues.join(', ')}` : ''}`
          : queues.length > 0
            ? `yes, except ${queues.join(', ')}`
            : 'yes';
      print(
        [
          `service:        ${out.service.running ? `running (pid ${out.service.pid})` : 'not running'}`,
          `state dir:      ${out.stateDir} (schema ${out.schemaVersion})`,
          `accepting jobs: ${accepting}`,
          `jobs by state:  ${counts(out.jobsByState)}`,
          `jobs by queue:  ${counts(out.jobsByQueue)}`,
          `delegations:    ${out.delegations}`,
          `accounting:     ${out.accountingRecords} record(s)`,
          `admin requests: ${out.openAdminRequests} waiting for the service`,
          `disk (state):   ${gib(out.disk.freeBytes)} free of ${gib(out.disk.totalBytes)}`,
        ].join('\n'),
      );
    });
}
