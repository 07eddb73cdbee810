/**
 * A burst from one VO and a few jobs from another on a real Slurm (docs/performance.md,
 * "Routes on Slurm"): the big VO submits `--big` jobs, then the small VO `--small`; each
 * job sleeps `--sleep` seconds in Slurm, and Ceres keeps at most `--slots` of them in the
 * batch system at once (engine.maxRunningJobs). Running every job of a 50,000-job burst to
 * its end does not fit a run (thousands of seconds through sbatch), so the measured phase
 * is the burst's acceptance and hold, then the small VO's start:
 *  1. the big VO's burst, 500 jobs a request, until every job is accepted (201) and the
 *     engine has taken each up (none left ACCEPTING, ACCEPTED or PREPARING): the jobs wait
 *     as PREPARED, held by the slots (and the share), a few of them in Slurm;
 *  2. Ceres's own CPU time (/proc/PID/stat utime+stime, not its sbatch and squeue children)
 *     per accepted job over step 1, and its resident memory (VmRSS) then;
 *  3. the small VO's jobs, then when each is first seen RUNNING, counted from its
 *     submission: first, half, all (waiting at most `--wait` seconds);
 *  4. Ceres's CPU per accepted job over the whole phase (steps 1 to 3).
 * Then the service is stopped and the cluster's jobs cancelled; the big VO's other jobs never run.
 * Two runs on one cluster: `routed` (a route per VO, each to its own partition, fair share by
 * VO) and `unrouted` (no routes: the queue is the partition, `fairShare.by: user`; both VOs
 * are one user here, whose jobs of each VO take turns).
 *
 * Needs root, Slurm (scripts/slurm-dev.sh) and voms-proxy-fake. Run after building:
 *   SLURM_DEV_PORT=7300 node dist/bench/routes-burst.bench.js [--big 50000] [--small 100]
 *       [--slots 64] [--sleep 5] [--wait 300] [--runs routed,unrouted[,routed,...]] [--profile DIR]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../test/helpers/service.js';
import { devUserVoProxies } from '../test/auth/voms/voms-fixture.js';
import { SLURM_DEV, slurmPort } from '../test/lrms/slurm-fixture.js';

const { values } = parseArgs({
  options: {
    big: { type: 'string', default: '50000' },
    small: { type: 'string', default: '100' },
    slots: { type: 'string', default: '64' },
    sleep: { type: 'string', default: '5' },
    wait: { type: 'string', default: '300' },
    runs: { type: 'string', default: 'routed,unrouted' },
    /** A folder for a CPU profile of each run's service (node --cpu-prof). */
    profile: { type: 'string' },
  },
});
const BIG = Number(values.big);
const SMALL = Number(values.small);
const SLOTS = Number(values.slots);
const SLEEP = Number(values.sleep);
const WAIT_S = Number(values.wait);
const PER_REQUEST = 500;
const ENDED = new Set(['FINISHED', 'FAILED', 'KILLED']);
/** States of a job the engine has not taken up to its hold yet. */
const NOT_YET = new Set(['ACCEPTING', 'ACCEPTED', 'PREPARING']);
const TICKS = 100; // USER_HZ on Linux

/** Ceres's own CPU seconds (fields 14 and 15 of /proc/PID/stat), without its children's. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

/** The service's resident memory, MiB. */
function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

const work = tempDir('routes-burst');
const slurmDir = join(work, 'slurm');
const slurmEnv = {
  ...process.env,
  SLURM_DEV_PORT: process.env.SLURM_DEV_PORT ?? slurmPort(),
  SLURM_DEV_EXTRA_PARTITIONS: 'vo_a vo_b',
  SLURM_DEV_MAX_JOB_COUNT: String(Math.max(20_000, BIG + SMALL + 1000)),
  // More CPUs than the host has (config_overrides): every job Ceres hands over starts at once.
  SLURM_DEV_CPUS: String(Math.max(16, SLOTS * 2)),
};
const started = spawnSync(SLURM_DEV, ['start', slurmDir], { env: slurmEnv, encoding: 'utf8' });
if (started.status !== 0) throw new Error(`slurm-dev.sh start: ${started.stderr}`);
const slurmConf = join(slurmDir, 'slurm.conf');

async function run(kind: 'routed' | 'unrouted', n: number): Promise<void> {
  // Each run its own state: a kind named twice in --runs (alternating pairs) starts empty again.
  const dir = join(work, `${kind}-${n}`);
  const voms = await devUserVoProxies(dir, ['atlas', 'cms']);
  const ceres: RunningCeres = await startCeres({
    stateDir: join(dir, 'state'),
    ...(values.profile !== undefined
      ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${values.profile}`, `--cpu-prof-name=${kind}-${n}.cpuprofile`] }
      : {}),
    config: {
      vomsDir: voms.vomsDir,
      authorization: { groups: [{ name: 'vos', match: [{ voms: '/atlas' }, { voms: '/cms' }] }], allow: ['vos'] },
      cluster: { queues: [{ name: 'vo_a' }] },
      engine: { maxRunningJobs: SLOTS, maxRunningJobsPerUser: 0 },
      jobs: { maxActiveJobsPerUser: 0 },
      http: { maxConnectionsPerIdentity: 1024, maxRequestsPerIdentity: 1024 },
      lrms: {
        backend: 'slurm',
        // 1 MB per CPU: the node's memory does not bound the jobs in Slurm, the slots do.
        slurm: { slurmConf, pollIntervalMs: 1000, extraSbatchArgs: ['--mem-per-cpu=1'] },
      },
      ...(kind === 'routed'
        ? {
            routes: [
              { name: 'vo-a', match: { fqans: ['/atlas'] }, partition: 'vo_a' },
              { name: 'vo-b', match: { fqans: ['/cms'] }, partition: 'vo_b' },
            ],
            fairShare: { by: 'vo' },
          }
        : {}),
    },
  });
  const big = new Client(ceres.url, voms.proxy('atlas'), join(ceres.pkiDir, 'ca.pem'));
  const small = new Client(ceres.url, voms.proxy('cms'), join(ceres.pkiDir, 'ca.pem'));
  const job = `(&(executable="/bin/sleep")(arguments="${SLEEP}")(queue="vo_a"))`;
  const submitAll = async (c: Client, n: number): Promise<{ ids: string[]; at: number[] }> => {
    const ids: string[] = [];
    const at: number[] = [];
    for (let done = 0; done < n; done += PER_REQUEST) {
      const k = Math.min(PER_REQUEST, n - done);
      const items = (await c.submit(`+${job.repeat(k)}`)) as { id: string; 'status-code': string }[];
      const now = performance.now();
      for (const it of items) {
        if (it['status-code'] !== '201') throw new Error(`refused: ${JSON.stringify(it)}`);
        ids.push(it.id);
        at.push(now);
      }
    }
    return { ids, at };
  };
  /** Counts of the jobs' REST states, asked 5,000 at a time. */
  const states = async (c: Client, ids: string[]): Promise<Map<string, number>> => {
    const n = new Map<string, number>();
    for (let i = 0; i < ids.length; i += 5000)
      for (const st of (await c.status(ids.slice(i, i + 5000))).values()) n.set(st, (n.get(st) ?? 0) + 1);
    return n;
  };
  try {
    const pid = ceres.child.pid!;
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    const b = await submitAll(big, BIG);
    const accepted = (performance.now() - t0) / 1000;
    // Every job of the burst taken up by the engine: held (PREPARED) or handed over.
    let held: Map<string, number>;
    for (;;) {
      held = await states(big, b.ids);
      if (![...held.keys()].some((st) => NOT_YET.has(st))) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const heldAt = (performance.now() - t0) / 1000;
    const cpuHeld = cpuSeconds(pid) - cpu0;
    const rss = rssMiB(pid);
    const s = await submitAll(small, SMALL);
    // The small VO's jobs: when each was first seen running (or past it), for at most WAIT_S.
    const startedAt = new Map<string, number>();
    const deadline = performance.now() + WAIT_S * 1000;
    while (startedAt.size < SMALL && performance.now() < deadline) {
      const st = await small.status(s.ids);
      const now = performance.now();
      for (const [id, state] of st)
        if (!startedAt.has(id) && (state === 'RUNNING' || ENDED.has(state))) startedAt.set(id, now);
      await new Promise((r) => setTimeout(r, 250));
    }
    const phase = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(pid) - cpu0;
    const waits = s.ids
      .map((id, i) => (startedAt.has(id) ? (startedAt.get(id)! - s.at[i]!) / 1000 : Infinity))
      .sort((x, y) => x - y);
    const q = (p: number): string => {
      const w = waits[Math.min(waits.length - 1, Math.ceil(p * waits.length) - 1)]!;
      return w === Infinity ? `not within ${WAIT_S} s` : `${w.toFixed(1)} s`;
    };
    const n = BIG + SMALL;
    const heldStates = [...held.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(
      `${kind}: ${BIG}+${SMALL} jobs, ${SLOTS} slots, sleep ${SLEEP} s; burst accepted in ${accepted.toFixed(1)} s, ` +
        `all taken up after ${heldAt.toFixed(1)} s (${heldStates}); Ceres CPU until then ${cpuHeld.toFixed(1)} s = ` +
        `${((cpuHeld * 1000) / BIG).toFixed(3)} ms per job, RSS ${rss.toFixed(0)} MiB; small VO started: first ${q(1 / SMALL)}, ` +
        `half ${q(0.5)}, all ${q(1)} after submission (${startedAt.size} of ${SMALL}); phase ${phase.toFixed(0)} s, ` +
        `Ceres CPU ${cpu.toFixed(1)} s = ${((cpu * 1000) / n).toFixed(3)} ms per accepted job`,
    );
  } finally {
    await big.close();
    await small.close();
    await stopCeres(ceres);
    // The jobs Ceres handed over: gone before the next run, which starts with a free node.
    spawnSync('scancel', ['--user=nobody'], { env: { ...slurmEnv, SLURM_CONF: slurmConf } });
    spawnSync('scancel', ['--user=root'], { env: { ...slurmEnv, SLURM_CONF: slurmConf } });
  }
}

try {
  for (const [n, kind] of values.runs.split(',').entries()) await run(kind as 'routed' | 'unrouted', n);
} finally {
  execFileSync(SLURM_DEV, ['stop', slurmDir], { env: slurmEnv });
  removeDir(work);
}
