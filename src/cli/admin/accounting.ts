/**
 * `ceres accounting export --from --to --out DIR` (src/accounting/export.ts) and
 * `ceres accounting republish --from --to` (src/accounting/apel-outbox.ts).
 */
import type { Command } from 'commander';
import { hostname } from 'node:os';
import { exportAccounting } from '../../accounting/export.js';
import { republish } from '../../accounting/apel-outbox.js';
import { AdminError } from '../../admin/state-db.js';
import { configOf, print, printJson, withDb, withStateOptions, type GlobalOptions } from './context.js';

/** `YYYY-MM-DD` (UTC midnight) or `YYYY-MM` (the first of the month). */
function day(text: string, option: string): number {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?$/.exec(text);
  const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3] ?? '1')) : NaN;
  if (
    !m ||
    Number.isNaN(t) ||
    new Date(t).getUTCMonth() !== Number(m[2]) - 1 ||
    new Date(t).getUTCDate() !== Number(m[3] ?? '1')
  ) {
    throw new AdminError(`${option}: '${text}' is not a date; use YYYY-MM-DD or YYYY-MM (UTC)`);
  }
  return t;
}

/** [--from, --to) in ms, checked. */
function range(opts: { from: string; to: string }): { fromMs: number; toMs: number } {
  const fromMs = day(opts.from, '--from');
  const toMs = day(opts.to, '--to');
  if (toMs <= fromMs) throw new AdminError(`--to (${opts.to}) must be after --from (${opts.from})`);
  return { fromMs, toMs };
}

export function registerAccountingCommands(program: Command): void {
  const acc = withStateOptions(program.command('accounting').description('accounting records of finished jobs'));
  acc
    .command('export')
    .description('write APEL summary/sync messages and OGF usage records of the jobs that ended in [--from, --to)')
    .requiredOption('--from <date>', 'first day (YYYY-MM-DD or YYYY-MM, UTC), inclusive')
    .requiredOption('--to <date>', 'end day (YYYY-MM-DD or YYYY-MM, UTC), exclusive')
    .requiredOption('--out <dir>', 'directory to write apel/ and usage-records/ into')
    .option('--site <name>', 'APEL site name (default: cluster.name of --config)')
    .option('--benchmark <type=value>', 'ServiceLevel to publish, e.g. HEPscore23=12.5')
    .action(
      async (opts: { from: string; to: string; out: string; site?: string; benchmark?: string }, cmd: Command) => {
        const o = cmd.optsWithGlobals<GlobalOptions>();
        const { fromMs, toMs } = range(opts);
        let benchmark: { type: string; value: number } | undefined;
        if (opts.benchmark !== undefined) {
          const m = /^([A-Za-z0-9._-]+)=(\d+(?:\.\d+)?)$/.exec(opts.benchmark);
          if (!m) throw new AdminError(`--benchmark: '${opts.benchmark}' is not TYPE=VALUE, e.g. HEPscore23=12.5`);
          benchmark = { type: m[1]!, value: Number(m[2]) };
        }
        const config = configOf(o);
        const site = opts.site ?? config?.accounting.apel.site ?? config?.cluster.name;
        if (site === undefined) throw new AdminError('--site is required (or --config, whose cluster.name is used)');
        const r = await withDb(o, (db) =>
          exportAccounting(db, {
            fromMs,
            toMs,
            outDir: opts.out,
            site,
            // The published host name, as in the messages sent to APEL.
            machineName: config?.cluster.hostname ?? hostname(),
            label: `${opts.from}_${opts.to}`,
            ...(benchmark ? { benchmark } : {}),
          }),
        );
        if (o.json) return printJson(r);
        print(`${r.records} record(s) exported to ${opts.out} (${r.files.length} file(s))`);
      },
    );
  acc
    .command('republish')
    .description(
      'send the records of the jobs that ended in [--from, --to) to APEL again (their whole months, with summaries); the running service sends them at its next interval',
    )
    .requiredOption('--from <date>', 'first day (YYYY-MM-DD or YYYY-MM, UTC), inclusive')
    .requiredOption('--to <date>', 'end day (YYYY-MM-DD or YYYY-MM, UTC), exclusive')
    .action(async (opts: { from: string; to: string }, cmd: Command) => {
      const o = cmd.optsWithGlobals<GlobalOptions>();
      const { fromMs, toMs } = range(opts);
      const records = await withDb(o, (db) => republish(db, fromMs, toMs));
      if (o.json) return printJson({ records });
      print(
        records === 0
          ? `no record of a job that ended in [${opts.from}, ${opts.to})`
          : `${records} record(s) queued again for APEL; the service sends them at its next interval (accounting.apel.intervalSeconds)`,
      );
    });
}
