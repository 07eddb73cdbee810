/**
 * A burst from one VO and a few jobs from another on a real Slurm (docs/performance.md,
 * "Routes on Slurm"): the big VO submits `--big` jobs, then the small VO `--small`; each
 * job sleeps `--sleep` seconds in Slurm, and Ceres keeps at most `--slots` of them in the
 * batch system at once (engine.maxRunningJobs). Measured:
 *  - when the small VO's jobs start (RUNNING), counted from their submission: first, half, all;
 *  - Ceres's own CPU time (/proc/PID/stat utime+stime, not its sbatch and squeue children)
 *    per job, from the first submission until every job has ended.
 * Two runs on one cluster: `routed` (a route per VO, each to its own partition, fair share by
 * VO) and `unrouted` (no routes: the queue is the partition, the users in turn, and both VOs
 * are one user here, so first come first served).
 *
 * Needs root, Slurm (scripts/slurm-dev.sh) and voms-proxy-fake. Run after building:
 *   node dist/bench/routes-burst.bench.js [--big 50000] [--small 100] [--slots 64] [--sleep 5]
 *                                         [--runs routed,unrouted]
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
    runs: { type: 'string', default: 'routed,unrouted' },
  },
});
const BIG = Number(values.big);
const SMALL = Number(values.small);
const SLOTS = Number(values.slots);
const SLEEP = Number(values.sleep);
const PER_REQUEST = 500;
const ENDED = new Set(['FINISHED', 'FAILED', 'KILLED']);
const TICKS = 100; // USER_HZ on Linux

/** Ceres's own CPU seconds (fields 14 and 15 of /proc/PID/stat), without its children's. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

const work = tempDir('routes-burst');
const slurmDir = join(work, 'slurm');
const slurmEnv = {
  ...process.env,
  SLURM_DEV_PORT: slurmPort(),
  SLURM_DEV_EXTRA_PARTITIONS: 'vo_a vo_b',
  SLURM_DEV_MAX_JOB_COUNT: String(Math.max(20_000, BIG + SMALL + 1000)),
  // More CPUs than the host has (config_overrides): every job Ceres hands over starts at once.
  SLURM_DEV_CPUS: String(Math.max(16, SLOTS * 2)),
};
const started = spawnSync(SLURM_DEV, ['start', slurmDir], { env: slurmEnv, encoding: 'utf8' });
if (started.status !== 0) throw new Error(`slurm-dev.sh start: ${started.stderr}`);
const slurmConf = join(slurmDir, 'slurm.conf');

async function run(kind: 'routed' | 'unrouted'): Promise<void> {
  const dir = join(work, kind);
  const voms = await devUserVoProxies(dir, ['atlas', 'cms']);
  const ceres: RunningCeres = await startCeres({
    stateDir: join(dir, 'state'),
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
  try {
    const cpu0 = cpuSeconds(ceres.child.pid!);
    const t0 = performance.now();
    const b = await submitAll(big, BIG);
    const bigSubmitted = performance.now() - t0;
    const s = await submitAll(small, SMALL);
    // The small VO's jobs: when each was first seen running (or past it).
    const startedAt = new Map<string, number>();
    while (startedAt.size < SMALL) {
      const st = await small.status(s.ids);
      const now = performance.now();
      for (const [id, state] of st)
        if (!startedAt.has(id) && (state === 'RUNNING' || ENDED.has(state))) startedAt.set(id, now);
      await new Promise((r) => setTimeout(r, 250));
    }
    const waits = s.ids.map((id, i) => (startedAt.get(id)! - s.at[i]!) / 1000).sort((x, y) => x - y);
    // Then every job to its end, for the CPU per job.
    const all = [...b.ids, ...s.ids];
    let failed = 0;
    for (;;) {
      let open = 0;
      failed = 0;
      for (let i = 0; i < all.length; i += 5000) {
        const st = await big.status(all.slice(i, i + 5000));
        for (const state of st.values()) {
          if (!ENDED.has(state)) open++;
          if (state !== 'FINISHED') failed++;
        }
      }
      if (open === 0) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(ceres.child.pid!) - cpu0;
    const q = (p: number) => waits[Math.min(waits.length - 1, Math.floor(p * waits.length))]!.toFixed(1);
    console.log(
      `${kind}: ${BIG}+${SMALL} jobs, ${SLOTS} slots, sleep ${SLEEP} s; big burst submitted in ${(bigSubmitted / 1000).toFixed(1)} s; ` +
        `small VO started: first ${q(0)} s, half ${q(0.5)} s, all ${q(1)} s after submission; ` +
        `all ended after ${wall.toFixed(0)} s; Ceres CPU ${cpu.toFixed(1)} s = ${((cpu * 1000) / all.length).toFixed(2)} ms per job; ${failed} not FINISHED`,
    );
  } finally {
    await big.close();
    await small.close();
    await stopCeres(ceres);
  }
}

try {
  for (const kind of values.runs.split(',')) await run(kind as 'routed' | 'unrouted');
} finally {
  execFileSync(SLURM_DEV, ['stop', slurmDir], { env: slurmEnv });
  removeDir(work);
}
