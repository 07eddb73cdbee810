/**
 * The batch systems of the scale benchmark, each started privately by its dev script on
 * the benchmark's own ports, with a queue that holds jobs without running them (a Slurm
 * partition set DOWN, a disabled Grid Engine queue): the filler jobs stay waiting, and so
 * counted and listed by every poll, while the sample jobs run in the other queue. The
 * backend is driven directly (as the conformance suite does), its commands through the
 * counting shims (./command-shims.ts).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { BatchBackend } from '../../src/lrms/backend.js';
import type { BatchCommandObserver } from '../../src/lrms/core/command-observer.js';
import { geCommandDir } from '../../src/lrms/gridengine/command-dir.js';
import { GridEngineBackend } from '../../src/lrms/gridengine/gridengine-backend.js';
import { QSTAT_ARGS, parseQstatXml } from '../../src/lrms/gridengine/qstat.js';
import { SlurmBackend } from '../../src/lrms/slurm/slurm-backend.js';
import { SQUEUE_ARGS, parseSqueue } from '../../src/lrms/slurm/squeue.js';
import { CommandShims } from './command-shims.js';

export interface BackendSettings {
  readonly workDir: string;
  readonly pollIntervalMs: number;
  readonly maxConcurrentCommands: number;
  readonly commands: BatchCommandObserver;
  /**
   * The compiled tree (`dist`) of another commit whose backend to run instead of this one's
   * (`--baseline`: the same jobs polled by the old code and the new, side by side).
   */
  readonly from?: string | undefined;
}

/** The backend class `name` of `file` (under src/lrms/) in the tree `from`, else this tree's `own`. */
async function backendClass<T>(own: T, from: string | undefined, file: string, name: string): Promise<T> {
  if (from === undefined) return own;
  const m = (await import(join(from, 'src', 'lrms', file))) as Record<string, T>;
  const c = m[name];
  if (c === undefined) throw new Error(`no ${name} in ${from}`);
  return c;
}

export interface ScaleCluster {
  readonly name: 'slurm' | 'gridengine';
  /** The status command a poll runs, and its arguments. */
  readonly statusCommand: string;
  readonly submitCommand: string;
  /** The queue whose jobs wait for ever; the queue whose jobs run. */
  readonly holdQueue: string;
  readonly runQueue: string;
  readonly shims: CommandShims;
  backend(s: BackendSettings): Promise<BatchBackend>;
  /** One status command run now (its answer, for timing the parser on). */
  statusAnswer(): string;
  /** The backend's parser of that answer; returns the number of jobs. */
  parse(answer: string): number;
  /**
   * Whether the batch system's controller still lists a job, asked for that job alone
   * (`--trace`: when the controller dropped an ended job); undefined where not traced.
   */
  listed?(localId: string): Promise<boolean>;
  stop(): void;
}

const SCRIPTS = join(process.cwd(), 'scripts');

function script(name: string, args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(join(SCRIPTS, name), args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Run `step` of a start; when it fails, the daemons just started are stopped before the error goes on. */
function stopOnError(env: NodeJS.ProcessEnv, dir: string, name: string, step: () => unknown): void {
  try {
    step();
  } catch (e) {
    script(name, ['stop', dir], env);
    throw e;
  }
}

/** `maxJobs`: MaxJobCount is raised above it (the samples and ended jobs come on top). */
export function startSlurm(dir: string, port: number, maxJobs: number): ScaleCluster {
  const slurmDir = join(dir, 'slurm');
  const env = {
    ...process.env,
    SLURM_DEV_PORT: String(port),
    SLURM_DEV_MAX_JOB_COUNT: String(maxJobs + 5_000),
    // Ended jobs stay listed (and counted) for the whole run.
    SLURM_DEV_MIN_JOB_AGE: '3600',
    SLURM_DEV_EXTRA_PARTITIONS: 'hold',
  };
  script('slurm-dev.sh', ['start', slurmDir], env);
  const slurmConf = join(slurmDir, 'slurm.conf');
  const slurmEnv = { ...process.env, SLURM_CONF: slurmConf };
  // Jobs submitted to a DOWN partition wait (Reason PartitionDown) and never start.
  stopOnError(env, slurmDir, 'slurm-dev.sh', () =>
    execFileSync('scontrol', ['update', 'PartitionName=hold', 'State=DOWN'], { env: slurmEnv }),
  );
  const shims = new CommandShims(dir, ['squeue', 'scancel', 'scontrol', 'sinfo', 'sacct'], ['sbatch']);
  return {
    name: 'slurm',
    statusCommand: 'squeue',
    submitCommand: 'sbatch',
    holdQueue: 'hold',
    runQueue: 'debug',
    shims,
    backend: async ({ from, ...s }) =>
      (await backendClass(SlurmBackend, from, 'slurm/slurm-backend.js', 'SlurmBackend')).create({
        ...s,
        binDir: shims.dir,
        slurmConf,
        wrapper: 'c',
        defaultPartition: 'hold',
      }),
    statusAnswer: () =>
      execFileSync('squeue', [...SQUEUE_ARGS], { env: slurmEnv, encoding: 'utf8', maxBuffer: 1 << 30 }),
    parse: (answer) => parseSqueue(answer).jobs.size,
    stop: () => void script('slurm-dev.sh', ['stop', slurmDir], env),
  };
}

/**
 * `viaPath`: the commands found on PATH (on Debian, its per-call wrapper: how the backend ran
 * them before it looked in $SGE_ROOT/bin/<arch>), for the side-by-side baseline.
 */
export async function startGridEngine(dir: string, port: number, viaPath: boolean): Promise<ScaleCluster> {
  const geDir = join(dir, 'gridengine');
  const env = { ...process.env, GRIDENGINE_DEV_PORT: String(port) };
  script('gridengine-dev.sh', ['start', geDir], env);
  const cell = { sgeRoot: join(geDir, 'root'), sgeCell: 'default', qmasterPort: port, execdPort: port + 1 };
  const geEnv = {
    ...process.env,
    SGE_ROOT: cell.sgeRoot,
    SGE_CELL: cell.sgeCell,
    SGE_QMASTER_PORT: String(port),
    SGE_EXECD_PORT: String(port + 1),
  };
  // Jobs bound to a disabled queue wait (qw) and never start.
  stopOnError(env, geDir, 'gridengine-dev.sh', () => execFileSync('qmod', ['-d', 'long'], { env: geEnv }));
  // The shims run with the backend's environment (the cell's variables): nothing more is needed.
  const realDir = viaPath ? '' : await geCommandDir('', cell.sgeRoot);
  stopOnError(env, geDir, 'gridengine-dev.sh', () => {
    if (!viaPath && realDir === '') throw new Error(`no Grid Engine commands in ${cell.sgeRoot}/bin/<arch>`);
  });
  const shims = new CommandShims(dir, ['qstat', 'qdel', 'qacct', 'qhost'], ['qsub'], realDir);
  return {
    name: 'gridengine',
    statusCommand: 'qstat',
    submitCommand: 'qsub',
    holdQueue: 'long',
    runQueue: 'all.q',
    shims,
    backend: async ({ from, ...s }) =>
      (await backendClass(GridEngineBackend, from, 'gridengine/gridengine-backend.js', 'GridEngineBackend')).create({
        ...s,
        ...cell,
        binDir: shims.dir,
        wrapper: 'c',
        defaultQueue: 'long',
      }),
    statusAnswer: () => execFileSync('qstat', [...QSTAT_ARGS], { env: geEnv, encoding: 'utf8', maxBuffer: 1 << 30 }),
    parse: (answer) => parseQstatXml(answer).size,
    // The real command, not its counting shim: the trace's questions are not the backend's.
    listed: (localId) =>
      new Promise((resolve) =>
        execFile(join(realDir || '/usr/bin', 'qstat'), ['-j', localId], { env: geEnv }, (e) => resolve(e === null)),
      ),
    stop: () => void script('gridengine-dev.sh', ['stop', geDir], env),
  };
}
