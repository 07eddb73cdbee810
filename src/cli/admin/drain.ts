/**
 * `ceres admin drain` / `undrain`: stop accepting new jobs (the whole service, or one
 * queue), running jobs continue; kept in the database across restarts
 * (src/admin/drains.ts). Works whether or not the service runs.
 */
import type { Command } from 'commander';
import { userInfo } from 'node:os';
import { ALL_QUEUES, Drains } from '../../admin/drains.js';
import { AdminError } from '../../admin/state-db.js';
import { configOf, globals, print, printJson, withDb } from './context.js';
import { iso, table } from './table.js';

export function registerDrainCommands(admin: Command): void {
  admin
    .command('drain')
    .description('accept no new jobs (running jobs continue); submissions get 503 with the reason')
    .option('--queue <name>', 'drain only this queue')
    .option('--reason <text>', 'told to submitters and shown in status', 'maintenance')
    .action(async (opts: { queue?: string; reason: string }, cmd: Command) => {
      const o = globals(cmd);
      checkQueue(o, opts.queue);
      if (opts.reason.trim() === '') throw new AdminError('--reason must not be empty');
      const list = await withDb(o, (db) => {
        const d = new Drains(db);
        d.drain(opts.queue ?? ALL_QUEUES, opts.reason.trim(), userInfo().username);
        return d.list();
      });
      show(list, o.json === true);
    });
  admin
    .command('undrain')
    .description('accept new jobs again')
    .option('--queue <name>', 'end the drain of this queue only')
    .option('--all', 'end every drain (service and queues)')
    .action(async (opts: { queue?: string; all?: boolean }, cmd: Command) => {
      const o = globals(cmd);
      if (opts.all && opts.queue !== undefined) throw new AdminError('--all and --queue exclude each other');
      const list = await withDb(o, (db) => {
        const d = new Drains(db);
        if (d.undrain(opts.queue ?? ALL_QUEUES, opts.all === true) === 0) {
          throw new AdminError(
            opts.queue !== undefined
              ? `queue ${opts.queue} is not drained`
              : opts.all
                ? 'nothing is drained'
                : 'the service is not drained (queues drained one by one need --queue or --all)',
          );
        }
        return d.list();
      });
      show(list, o.json === true);
    });
}

function checkQueue(o: { config?: string }, queue: string | undefined): void {
  const config = configOf(o);
  if (queue === undefined || config === undefined) return;
  const names = config.cluster.queues.map((q) => q.name);
  if (!names.includes(queue))
    throw new AdminError(`--queue: '${queue}' is not a configured queue (${names.join(', ') || 'none configured'})`);
}

function show(list: { queue: string; reason: string; since: number; by: string }[], json: boolean): void {
  if (json) return printJson({ draining: list });
  if (list.length === 0) return print('accepting jobs: nothing is drained');
  print(
    table(
      ['DRAINED', 'SINCE', 'BY', 'REASON'],
      list.map((d) => [d.queue === ALL_QUEUES ? '(service)' : d.queue, iso(d.since), d.by, d.reason]),
    ),
  );
}
