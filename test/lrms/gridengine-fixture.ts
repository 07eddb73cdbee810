// A private Grid Engine (sge_qmaster + sge_execd) for the tests of one file, started by
// scripts/gridengine-dev.sh in a fresh directory and stopped by pid after them. Skipped
// where Grid Engine is not installed or the tests do not run as root; CERES_REQUIRE_GRIDENGINE=1
// (set by CI) makes that a failure.
import { after, before } from 'node:test';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { slurmPort } from './slurm-fixture.js';

export const GRIDENGINE_DEV = join(process.cwd(), 'scripts', 'gridengine-dev.sh');

export function gridEngineMissing(): string | undefined {
  if (process.getuid?.() !== 0) return 'the Grid Engine tests need root (the daemons switch users)';
  for (const p of ['/usr/sbin/sge_qmaster', '/usr/sbin/sge_execd', '/usr/bin/qsub', '/var/spool/gridengine/spooldb']) {
    if (!existsSync(p))
      return `Grid Engine is not installed (no ${p}): apt-get install -y gridengine-master gridengine-exec gridengine-client`;
  }
  return undefined;
}

/** The skip option for describe(): undefined (run), a reason (skip), or a throw when CI requires Grid Engine. */
export function gridEngineSkip(): string | undefined {
  const why = gridEngineMissing();
  if (why !== undefined && process.env.CERES_REQUIRE_GRIDENGINE === '1')
    throw new Error(`CERES_REQUIRE_GRIDENGINE=1 but ${why}`);
  return why === undefined ? undefined : `${why}; CERES_REQUIRE_GRIDENGINE=1 makes this a failure`;
}

export interface GridEngineCell {
  dir: string;
  sgeRoot: string;
  qmasterPort: number;
  execdPort: number;
  /** The environment every Grid Engine command needs. */
  env(): NodeJS.ProcessEnv;
  /** The backend's settings of this cell (`lrms.gridengine`). */
  settings(): { sgeRoot: string; sgeCell: string; qmasterPort: number; execdPort: number };
  /** Run a Grid Engine command against this cell. */
  cmd(tool: string, args: string[]): string;
  script(action: 'start' | 'stop' | 'status'): { status: number | null; out: string };
}

export function useGridEngine(): GridEngineCell {
  const port = Number(slurmPort());
  const cell: GridEngineCell = {
    dir: '',
    sgeRoot: '',
    qmasterPort: port,
    execdPort: port + 1,
    env: () => ({
      ...process.env,
      SGE_ROOT: cell.sgeRoot,
      SGE_CELL: 'default',
      SGE_QMASTER_PORT: String(port),
      SGE_EXECD_PORT: String(port + 1),
    }),
    settings: () => ({ sgeRoot: cell.sgeRoot, sgeCell: 'default', qmasterPort: port, execdPort: port + 1 }),
    cmd: (tool, args) => execFileSync(tool, args, { env: cell.env(), encoding: 'utf8' }),
    script(action) {
      const r = spawnSync(GRIDENGINE_DEV, [action, cell.dir], {
        env: { ...process.env, GRIDENGINE_DEV_PORT: String(port) },
        encoding: 'utf8',
      });
      if (r.status !== 0 && action !== 'status')
        throw new Error(`gridengine-dev.sh ${action} failed: ${r.stderr}${r.stdout}`);
      return { status: r.status, out: r.stdout + r.stderr };
    },
  };
  before(async () => {
    cell.dir = await mkdtemp(join(tmpdir(), 'ceres-ge-'));
    // qsub run as a job's local account reads the cell's files, and the execution daemon's
    // shepherd runs the job's script from its spool as that account.
    await chmod(cell.dir, 0o755);
    cell.sgeRoot = join(cell.dir, 'root');
    cell.script('start');
  });
  after(async () => {
    if (cell.dir === '') return;
    cell.script('stop');
    await rm(cell.dir, { recursive: true, force: true });
  });
  return cell;
}
