/**
 * What the Slurm backend needs from this host before it can submit anything: the Slurm
 * commands it runs (from `binDir`, else the service's PATH) and a readable slurm.conf when
 * one is named (`slurmConf`, else the service's SLURM_CONF). Without them every job would
 * fail at its sbatch, minutes after it was accepted; the start refuses instead and
 * `ceres admin config check` says the same (src/service/config-checks.ts).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { unreadablePath } from '../../config/path-problems.js';

/** The commands every Slurm site has and the backend runs (sacct only where accounting is kept). */
export const SLURM_COMMANDS = ['sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo'] as const;

export interface SlurmHostProblem {
  readonly key: 'lrms.slurm.binDir' | 'lrms.slurm.slurmConf';
  readonly message: string;
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
