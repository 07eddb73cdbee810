// The service on a real Slurm: its info document tells the truth about the cluster (one
// ComputingShare per queue with the partition's MaxWallTime, free slots, the jobs Slurm
// runs and holds, the cluster's slots and nodes). The job life cycle through the real
// ARC client on Slurm is test/interop/arc-client-slurm.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';
import { until } from './backend.case.js';

const skip = slurmSkip();

describe('Ceres on a real Slurm: the info document', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let work = '';
  let client: Client;
  before(async () => {
    work = tempDir('slurm-svc');
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        cluster: { queues: [{ name: 'debug' }, { name: 'long', maxWallTimeSeconds: 7200 }] },
        lrms: { backend: 'slurm', slurm: { slurmConf: slurm.conf, pollIntervalMs: 300, infoRefreshMs: 300 } },
      },
    });
    client = Client.forUser(ceres);
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
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
      return value(share(doc, 'debug'), 'LocalWaitingJobs') === '2' && value(l, 'LocalRunningJobs') === '1';
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
