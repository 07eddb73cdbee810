// The service asks Slurm about its partitions before it says it is ready, and refuses at
// submission what a partition can never give. Before, the first info read after a start
// published the host's CPUs and no MaxWallTime (sinfo was asked lazily, at that read),
// and a job over a partition's MaxTime, memory or CPUs was accepted and failed minutes
// later at sbatch; a job asking exactly the partition's MaxTime failed there too (the
// time margin passed to sbatch went over it).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();

describe('Slurm partition limits at start and at submission', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let work = '';
  let client: Client;
  /** The first info document, read right after the start: before any other request. */
  let firstInfo = '';
  before(async () => {
    work = tempDir('slurm-limits');
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        cluster: { queues: [{ name: 'debug' }, { name: 'long' }] },
        // The default infoRefreshMs (30 s): a lazy ask would not have an answer by the first read.
        lrms: { backend: 'slurm', slurm: { slurmConf: slurm.conf, pollIntervalMs: 300 } },
      },
    });
    client = Client.forUser(ceres);
    firstInfo = (await client.req('GET', '/rest/1.0/info', undefined, { accept: 'application/xml' })).text;
  });
  after(async () => {
    await client?.close();
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  const value = (text: string, el: string): string | undefined => new RegExp(`<${el}>([^<]*)</${el}>`).exec(text)?.[1];
  const share = (doc: string, name: string): string => {
    const m = doc.split('<ComputingShare ').find((s) => s.includes(`<Name>${name}</Name>`));
    assert.ok(m, `no ComputingShare ${name}`);
    return m.slice(0, m.indexOf('</ComputingShare>'));
  };
  /** Slurm's CPUs of a partition and the memory of its node in MB. */
  const partition = (name: string): { cpus: number; memMb: number } => {
    const [c, m] = slurm.cmd('sinfo', ['-h', '-p', name, '-o', '%C|%m']).trim().split('|');
    return { cpus: Number(c?.split('/')[3]), memMb: Number(m) };
  };
  const refused = async (xrsl: string): Promise<{ status: string; code: string; reason: string }> => {
    const [item] = await client.submit(xrsl);
    return { status: item['status-code'], code: item.code, reason: item.reason };
  };

  it("the first info read after the start publishes Slurm's partitions: MaxWallTime and the cluster's CPUs", () => {
    assert.equal(value(share(firstInfo, 'debug'), 'MaxWallTime'), '3600', "debug's MaxTime (60 minutes)");
    assert.equal(value(firstInfo, 'TotalSlots'), String(partition('debug').cpus), "Slurm's CPUs, not the host's");
  });

  it("a wall time over the partition's MaxTime is refused at submission, naming the limit and Slurm", async () => {
    const r = await refused('&(executable="/bin/true")(queue="debug")(walltime="7200")');
    assert.equal(r.status, '422');
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.match(
      r.reason,
      /^Requested wall time \(7200 s\) exceeds the limit of queue debug \(3600 s, the limit of Slurm partition debug\)$/,
    );
  });

  it("a memory per slot over the partition's largest node is refused, naming the limit", async () => {
    const { memMb } = partition('debug');
    const r = await refused(`&(executable="/bin/true")(queue="debug")(memory="${memMb + 1}")`);
    assert.equal(r.status, '422');
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.match(
      r.reason,
      new RegExp(
        `^Requested memory \\(${(memMb + 1) * 1048576} bytes\\) exceeds the limit of queue debug \\(${memMb * 1048576} bytes, the limit of Slurm partition debug\\)$`,
      ),
    );
  });

  it("a slot count over the partition's CPUs is refused, naming the limit", async () => {
    const { cpus } = partition('long');
    const r = await refused(`&(executable="/bin/true")(queue="long")(count="${cpus + 1}")`);
    assert.equal(r.status, '422');
    assert.match(
      r.reason,
      new RegExp(
        `^Requested slot count \\(${cpus + 1} slots\\) exceeds the limit of queue long \\(${cpus} slots, the limit of Slurm partition long\\)$`,
      ),
    );
  });

  it("a job asking exactly the partition's MaxTime, and one in a partition without one, run to the end", async () => {
    const [exact] = await client.submit('&(executable="/bin/true")(queue="debug")(walltime="3600")');
    const [unlimited] = await client.submit('&(executable="/bin/true")(queue="long")(walltime="7200")');
    assert.equal(exact['status-code'], '201', exact.reason);
    assert.equal(unlimited['status-code'], '201', unlimited.reason);
    const states = await client.waitFor([exact.id, unlimited.id], ['FINISHED', 'FAILED', 'KILLED'], 90_000);
    assert.equal(states.get(exact.id), 'FINISHED', 'sbatch took it: its time limit stays within the partition');
    assert.equal(states.get(unlimited.id), 'FINISHED');
  });
});
