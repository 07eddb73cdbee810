// The hand-over to a real Slurm follows the fair share (docs/routes.md, "Limits and fair
// share"): with one VO's burst waiting for a slow sbatch, another VO's job is submitted
// next, not after the burst. The engine hands the backend at most twice its concurrent
// submissions (lrms.slurm.maxConcurrentCommands) and keeps the rest waiting in its own
// share order. Before, every job of the burst was handed over at once and queued for
// sbatch, first come first served, so the small VO's job was the last sbatch (the 17th of 17).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Client,
  jobWritableFile,
  killProcessesUnder,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { devUserVoProxies } from '../auth/voms/voms-fixture.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
const BURST = 16;
/** lrms.slurm.maxConcurrentCommands: one sbatch at a time, so the engine hands over two. */
const CONCURRENT = 1;

describe('hand-over to Slurm in fair-share order', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let work = '';
  let atlas: Client;
  let cms: Client;
  let sbatchLog = '';
  const ids: string[] = [];
  before(async () => {
    work = tempDir('slurm-share-handover');
    // The Slurm tools as they are, but sbatch slowed to half a second a call (a loaded
    // controller), and each call's job name written to a log in the order the calls came.
    const bin = join(work, 'bin');
    sbatchLog = join(work, 'sbatch.log');
    // sbatch runs as the job's account (nobody here): it must be able to write the log.
    writeFileSync(sbatchLog, '', { mode: 0o666 });
    chmodSync(sbatchLog, 0o666);
    mkdirSync(bin);
    for (const tool of ['squeue', 'scancel', 'scontrol', 'sinfo', 'sacct', 'sacctmgr'])
      symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    writeFileSync(
      join(bin, 'sbatch'),
      `#!/bin/sh\nfor a in "$@"; do case $a in --job-name=*) echo "\${a#--job-name=}" >> ${sbatchLog};; esac; done\n` +
        'sleep 0.5\nexec /usr/bin/sbatch "$@"\n',
    );
    chmodSync(join(bin, 'sbatch'), 0o755);
    voms = await devUserVoProxies(work, ['atlas', 'cms']);
    config = {
      vomsDir: voms.vomsDir,
      authorization: { groups: [{ name: 'vos', match: [{ voms: '/atlas' }, { voms: '/cms' }] }], allow: ['vos'] },
      cluster: { queues: [{ name: 'debug' }] },
      engine: { maxRunningJobsPerUser: 0 },
      fairShare: { by: 'vo' },
      lrms: {
        backend: 'slurm',
        slurm: {
          slurmConf: slurm.conf,
          binDir: bin,
          maxConcurrentCommands: CONCURRENT,
          pollIntervalMs: 500,
          killGraceSeconds: 2,
          extraSbatchArgs: ['--mem-per-cpu=1'],
        },
      },
    };
    await start();
  });
  let voms: Awaited<ReturnType<typeof devUserVoProxies>>;
  let config: Record<string, unknown> = {};
  /** The service on the file's state directory (again after a crash), and a client per VO. */
  const start = async (): Promise<void> => {
    ceres = await startCeres({ stateDir: join(work, 'state'), config });
    atlas = new Client(ceres.url, voms.proxy('atlas'), join(ceres.pkiDir, 'ca.pem'));
    cms = new Client(ceres.url, voms.proxy('cms'), join(ceres.pkiDir, 'ca.pem'));
  };
  after(async () => {
    if (ids.length > 0 && atlas) {
      // Waited for a while only: a job whose sbatch runs ends once it answers; the service and
      // Slurm stop under whatever is left, and their processes go below.
      await atlas.action('kill', ids);
      await atlas.waitFor(ids, ENDED, 10_000);
    }
    await atlas?.close();
    await cms?.close();
    if (ceres) await stopCeres(ceres);
    // A killed job's processes that Slurm's stop left behind (they run as another account).
    if (work) killProcessesUnder(work);
    if (work) removeDir(work);
  });

  /** Job names in the order sbatch was called. */
  const calls = (): string[] => readFileSync(sbatchLog, 'utf8').split('\n').filter(Boolean);

  it("another VO's job is submitted next, not behind the burst handed over before it", async () => {
    const job = '(&(executable="/bin/sleep")(arguments="600"))';
    const burst = (await atlas.submit(`+${job.repeat(BURST)}`)).map((j) => j.id as string);
    ids.push(...burst);
    assert.equal(burst.length, BURST);
    // The burst is under way: its first sbatch has come.
    await untilValue('the first sbatch of the burst', async () => (calls().length > 0 ? true : undefined), 60_000);
    const [small] = await cms.submit(job.slice(1, -1));
    const id = small!.id as string;
    ids.push(id);
    const before = calls().length;
    const order = await untilValue(
      "the small VO's sbatch",
      async () => {
        const c = calls();
        const i = c.findIndex((name) => name.endsWith(id));
        return i >= 0 ? { i, c } : undefined;
      },
      120_000,
    );
    // At most the jobs handed over when it came (twice the concurrent sbatch) come first.
    assert.ok(
      order.i <= before + 2 * CONCURRENT,
      `the small VO's job was sbatch call ${order.i + 1} (${before} calls before it was accepted, of ${BURST} burst jobs)`,
    );
    assert.ok(order.i < BURST / 2, `call ${order.i + 1}: not behind the burst`);
    await cms.waitFor([id], ['RUNNING', 'QUEUING'], 60_000);
  });

  it('a crash with jobs being submitted and others held: after the restart each job runs exactly once', async () => {
    // The first test's jobs out of the way (they hold the node's CPUs).
    await atlas.action('kill', ids);
    await atlas.waitFor(ids, ENDED, 10_000);
    const ledger = jobWritableFile(join(work, 'ledger'));
    const n = 10;
    const descs = Array.from(
      { length: n },
      (_, i) => `(&(executable="/bin/sh")(arguments="-c" "echo m${i} >> ${ledger}"))`,
    ).join('');
    const jobs = (await atlas.submit(`+${descs}`)).map((j) => j.id as string);
    assert.equal(jobs.length, n);
    // Killed while the first submissions are under way and the others wait for their turn.
    await untilValue('a submission of the batch', async () =>
      calls().some((name) => jobs.some((id) => name.endsWith(id))) ? true : undefined,
    );
    await stopCeres(ceres!, 'SIGKILL');
    await atlas.close();
    await cms.close();
    await start();
    const st = await atlas.waitFor(jobs, ENDED, 180_000);
    assert.deepEqual(
      [...st.values()],
      jobs.map(() => 'FINISHED'),
    );
    const runs = readFileSync(ledger, 'utf8').split('\n').filter(Boolean).sort();
    assert.deepEqual(runs, Array.from({ length: n }, (_, i) => `m${i}`).sort(), 'each job ran once');
  });
});
