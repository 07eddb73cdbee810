/**
 * What the Slurm backend needs from this host before it can submit anything: the Slurm
 * commands it runs (from `binDir`, else the service's PATH) and a readable slurm.conf when
 * one is named (`slurmConf`, else the service's SLURM_CONF). Without them every job would
 * fail at its sbatch, minutes after it was accepted; the start refuses instead and
 * `ceres admin config check` says the same (src/service/config-checks.ts).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { unreadablePath } from '../../config/path-problems.js';
import type { Route } from '../../config/sections/routes.js';

/** The commands every Slurm site has and the backend runs (sacct only where accounting is kept). */
export const SLURM_COMMANDS = ['sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo'] as const;

export interface SlurmHostProblem {
  readonly key: string;
  readonly message: string;
  readonly warning?: true;
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function slurmHostProblems(
  o: { readonly binDir: string; readonly slurmConf: string },
  env: NodeJS.ProcessEnv,
): SlurmHostProblem[] {
  const out: SlurmHostProblem[] = [];
  const dirs = o.binDir !== '' ? [o.binDir] : (env.PATH ?? '').split(delimiter).filter((d) => d !== '');
  const missing = SLURM_COMMANDS.filter((c) => !dirs.some((d) => executable(join(d, c))));
  if (missing.length > 0)
    out.push({
      key: 'lrms.slurm.binDir',
      message:
        o.binDir !== ''
          ? `${o.binDir} holds no executable ${missing.join(', ')}: name the folder of the Slurm commands (or leave the key empty to find them on PATH)`
          : `${missing.join(', ')} not found on the service's PATH (${env.PATH ?? 'unset'}): install the Slurm client commands, or name their folder in lrms.slurm.binDir`,
    });
  const conf = o.slurmConf !== '' ? o.slurmConf : env.SLURM_CONF;
  const why = conf !== undefined && conf !== '' ? unreadablePath(conf) : undefined;
  if (why !== undefined)
    out.push({
      key: 'lrms.slurm.slurmConf',
      message:
        o.slurmConf !== ''
          ? `${conf}: ${why}: name the cluster's slurm.conf (the Slurm commands read it)`
          : `empty, and the service's SLURM_CONF names ${conf}, which ${why === 'does not exist' ? 'does not exist' : `is ${why}`}: name the cluster's slurm.conf here or fix SLURM_CONF`,
    });
  return out;
}

/** Seconds one question to Slurm may take: a controller that does not answer is a warning, not a hang. */
const ASK_TIMEOUT_MS = 10_000;

/** Output lines of a Slurm command, or why it gave none (not installed, no controller, no accounting). */
function ask(
  o: { readonly binDir: string; readonly slurmConf: string },
  env: NodeJS.ProcessEnv,
  tool: string,
  args: readonly string[],
): Promise<string[] | { readonly failed: string }> {
  const conf = o.slurmConf !== '' ? o.slurmConf : env.SLURM_CONF;
  return new Promise((resolve) => {
    execFile(
      o.binDir !== '' ? join(o.binDir, tool) : tool,
      args,
      {
        env: { ...env, ...(conf !== undefined && conf !== '' ? { SLURM_CONF: conf } : {}) },
        timeout: ASK_TIMEOUT_MS,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err === null)
          resolve(
            stdout
              .split('\n')
              .map((l) => l.trim())
              .filter((l) => l !== ''),
          );
        else {
          // Every line: Slurm's cause comes before its `fatal:` line.
          const said = stderr.trim().split('\n').join('; ').slice(0, 300);
          resolve({ failed: err.killed ? `no answer within ${ASK_TIMEOUT_MS / 1000} s` : said || err.message });
        }
      },
    );
  });
}

/**
 * The partitions, QoS and accounts the routes name (docs/routes.md), checked against what
 * Slurm knows: `sinfo` for the partitions (hidden ones too), `sacctmgr` for QoS and accounts
 * (they live in slurmdbd). A name Slurm does not know is an error: sbatch refuses an unknown
 * partition, and without AccountingStorageEnforce it takes an unknown account or QoS and runs
 * the job without it. When Slurm cannot be asked (the controller down, no accounting), the
 * names are not checked and a warning says so: the start must not wait for the batch system.
 */
export async function slurmRouteProblems(
  routes: readonly Route[],
  o: { readonly binDir: string; readonly slurmConf: string },
  env: NodeJS.ProcessEnv,
): Promise<SlurmHostProblem[]> {
  const out: SlurmHostProblem[] = [];
  const kinds = [
    { field: 'partition', what: 'partition', tool: 'sinfo', args: ['-h', '-a', '-o', '%R'] },
    { field: 'qos', what: 'QoS', tool: 'sacctmgr', args: ['-n', '-P', 'show', 'qos', 'format=name'] },
    { field: 'account', what: 'account', tool: 'sacctmgr', args: ['-n', '-P', 'show', 'account', 'format=account'] },
  ] as const;
  for (const k of kinds) {
    const named = routes.flatMap((r, i) => (r[k.field] !== undefined ? [{ i, route: r.name, name: r[k.field]! }] : []));
    if (named.length === 0) continue;
    const known = await ask(o, env, k.tool, k.args);
    if (!Array.isArray(known)) {
      out.push({
        key: `routes.${named[0]!.i}.${k.field}`,
        message: `the routes' ${k.what} names were not checked: \`${k.tool} ${k.args.join(' ')}\` failed (${known.failed})`,
        warning: true,
      });
      continue;
    }
    // Slurm compares these names without case (sacctmgr lowers accounts and QoS).
    const set = new Set(known.map((n) => n.toLowerCase()));
    for (const n of named)
      if (!set.has(n.name.toLowerCase()))
        out.push({
          key: `routes.${n.i}.${k.field}`,
          message: `route ${n.route}: Slurm has no ${k.what} ${n.name} (it knows ${known.join(', ') || 'none'})`,
        });
  }
  return out;
}
