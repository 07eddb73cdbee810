/** `ceres accounting export --from --to --out DIR` (src/accounting/export.ts). */
import type { Command } from 'commander';
import { hostname } from 'node:os';
import { exportAccounting } from '../../accounting/export.js';
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
        const fromMs = day(opts.from, '--from');
        const toMs = day(opts.to, '--to');
        if (toMs <= fromMs) throw new AdminError(`--to (${opts.to}) must be after --from (${opts.from})`);
        let benchmark: { type: string; value: number } | undefined;
        if (opts.benchmark !== undefined) {
          const m = /^([A-Za-z0-9._-]+)=(\d+(?:\.\d+)?)$/.exec(opts.benchmark);
          if (!m) throw new AdminError(`--benchmark: '${opts.benchmark}' is not TYPE=VALUE, e.g. HEPscore23=12.5`);
          benchmark = { type: m[1]!, value: Number(m[2]) };
        }
        const site = opts.site ?? configOf(o)?.cluster.name;
        if (site === undefined) throw new AdminError('--site is required (or --config, whose cluster.name is used)');
        const r = await withDb(o, (db) =>
          exportAccounting(db, {
            fromMs,
            toMs,
            outDir: opts.out,
            site,
            machineName: hostname(),
            label: `${opts.from}_${opts.to}`,
            ...(benchmark ? { benchmark } : {}),
          }),
        );
        if (o.json) return printJson(r);
        print(`${r.records} record(s) exported to ${opts.out} (${r.files.length} file(s))`);
      },
    );
}
