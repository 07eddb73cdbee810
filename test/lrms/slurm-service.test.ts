// The service on a real Slurm: its info document tells the truth about the cluster (one
// ComputingShare per queue with the partition's MaxWallTime, free slots, the jobs Slurm
// runs and holds, the cluster's slots and nodes); a job runs in the partition of its
// queue; kill cancels it in Slurm; a service crash while a Slurm job runs loses nothing
// and submits nothing twice. The job life cycle through the real
// ARC client on Slurm is test/interop/arc-client-slurm.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';
import { until } from './backend.case.js';

const skip = slurmSkip();

describe('Ceres on a real Slurm', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let work = '';
  let client: Client;
  const start = async (): Promise<void> => {
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        cluster: { queues: [{ name: 'debug' }, { name: 'long', maxWallTimeSeconds: 7200 }, { name: 'gone' }] },
        lrms: {
          backend: 'slurm',
          slurm: { slurmConf: slurm.conf, pollIntervalMs: 300, infoRefreshMs: 300, killGraceSeconds: 2 },
        },
      },
    });
    client = Client.forUser(ceres);
  };
  before(async () => {
    work = tempDir('slurm-svc');
    await start();
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  /** Slurm's jobs for a Ceres job: `id|state|partition` lines. */
  const slurmJobs = (id: string): string[] =>
    slurm
      .cmd('squeue', ['-h', '-a', '-t', 'all', `--name=ceres-${id}`, '-o', '%i|%T|%P'])
      .split('\n')
      .filter((l) => l !== '');

  it('a job runs in the partition of its queue; kill cancels it in Slurm before KILLED', async () => {
    const [job] = await client.submit('&(executable="/bin/sleep")(arguments="600")(queue="long")');
    const id = job.id as string;
    await client.waitFor([id], ['RUNNING'], 60_000);
    assert.deepEqual(
      slurmJobs(id).map((l) => l.split('|').slice(1).join('|')),
      ['RUNNING|long'],
    );
    await client.action('kill', [id]);
    const st = await client.waitFor([id], ['KILLED', 'FAILED', 'FINISHED'], 60_000);
    assert.equal(st.get(id), 'KILLED');
    assert.equal(slurmJobs(id)[0]?.split('|')[1], 'CANCELLED', 'Slurm confirms the cancel');
  });

  it("a queue Slurm refuses: the job fails with Slurm's reason in its errors", async () => {
    const [job] = await client.submit('&(executable="/bin/true")(queue="gone")');
    const id = job.id as string;
    const st = await client.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 60_000);
    assert.equal(st.get(id), 'FAILED');
    const errors = await client.req('GET', `/rest/1.1/jobs/${id}/diagnose/errors`, undefined, { accept: 'text/plain' });
    assert.match(errors.text, /Invalid partition name specified/, errors.text);
    assert.deepEqual(slurmJobs(id), [], 'nothing reached Slurm');
  });

  it('a service crash while a Slurm job runs: after the restart the job is followed to its end, submitted once', async () => {
    const go = join(work, 'go-restart');
    const [job] = await client.submit(
      `&(executable="/bin/sh")(arguments="-c" "while [ ! -e ${go} ]; do sleep 0.1; done; echo done")(stdout="out.txt")`,
    );
    const id = job.id as string;
    await client.waitFor([id], ['RUNNING'], 60_000);
    await stopCeres(ceres as RunningCeres, 'SIGKILL');
    await client.close();
    // The job ends while no service watches it.
    writeFileSync(go, '');
    await until('the Slurm job to end', () => slurmJobs(id)[0]?.split('|')[1] === 'COMPLETED');
    await start();
    const st = await client.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 60_000);
    assert.equal(st.get(id), 'FINISHED');
    assert.equal(slurmJobs(id).length, 1, 'one Slurm job, never submitted again');
  });

  const info = async (): Promise<string> =>
    (await client.req('GET', '/rest/1.0/info', undefined, { accept: 'application/xml' })).text;
  const share = (doc: string, name: string): string => {
    const m = doc.split('<ComputingShare ').find((s) => s.includes(`<Name>${name}</Name>`));
    assert.ok(m, `no ComputingShare ${name} in ${doc.slice(0, 2000)}`);
    return m.slice(0, m.indexOf('</ComputingShare>'));
  };
  const value = (text: string, el: string): string | undefined => new RegExp(`<${el}>([^<]*)</${el}>`).exec(text)?.[1];

  it('one share per partition with its limits, slots and the jobs Slurm runs and holds', async () => {
    // Two jobs of another user held in `debug`, one running in `long`.
    slurm.cmd('sbatch', ['--hold', '-p', 'debug', '-o', '/dev/null', '--wrap', 'true']);
    slurm.cmd('sbatch', ['--hold', '-p', 'debug', '-o', '/dev/null', '--wrap', 'true']);
    slurm.cmd('sbatch', ['-p', 'long', '-o', '/dev/null', '--wrap', 'sleep 30']);
    let doc = '';
    await until('the cluster figures in the info document', async () => {
      doc = await info();
      const l = share(doc, 'long');
      // Slurm reports the node's allocated CPUs separately from the job list, and may lag it:
      // wait for both (the free slots are checked against the total below).
      return (
        value(share(doc, 'debug'), 'LocalWaitingJobs') === '2' &&
        value(l, 'LocalRunningJobs') === '1' &&
        Number(value(share(doc, 'debug'), 'FreeSlots')) < Number(value(doc, 'TotalSlots'))
      );
    });
    const debug = share(doc, 'debug');
    const long = share(doc, 'long');
    assert.equal(value(debug, 'MaxWallTime'), '3600', "the partition's MaxTime (60 minutes)");
    assert.equal(value(long, 'MaxWallTime'), '7200', "a configured limit wins over the partition's (infinite)");
    assert.equal(value(debug, 'MappingQueue'), 'debug');
    const free = Number(value(debug, 'FreeSlots'));
    const total = Number(value(doc, 'TotalSlots'));
    assert.ok(total >= 8, `TotalSlots ${total}`);
    assert.ok(free < total, `FreeSlots ${free} < ${total}: the running job holds a CPU`);
    assert.equal(value(doc, 'ProductName'), 'slurm');
    assert.equal(value(doc, 'TotalInstances'), '1', 'one node');
  });
});
