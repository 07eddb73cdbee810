// Why a job waits, on the service over a real Slurm (docs/routes.md, "Why a job waits"): a
// job Slurm keeps pending for Resources (the node's every CPU taken by another job) says
// Slurm's own reason in its info document and in `ceres admin show`, read from the one
// squeue poll; once it runs, the reason is gone. Before, the document said nothing.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { ceresCli } from '../admin/cli.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();
const REASON = "Waiting: in the batch system: QUEUING, the batch system's reason: Resources";
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];

/** The OtherMessages of a JSON ComputingActivity, as a list (a lone value is a string). */
const messages = (doc: { ComputingActivity: { OtherMessages?: string | string[] } }): string[] => {
  const m = doc.ComputingActivity.OtherMessages;
  return m === undefined ? [] : Array.isArray(m) ? m : [m];
};

describe("a job pending in Slurm says Slurm's reason", { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let work = '';
  let client: Client;
  const ids: string[] = [];
  before(async () => {
    work = tempDir('slurm-why');
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        cluster: { queues: [{ name: 'debug' }] },
        lrms: {
          backend: 'slurm',
          slurm: { slurmConf: slurm.conf, pollIntervalMs: 300, infoRefreshMs: 300, killGraceSeconds: 2 },
        },
      },
    });
    client = Client.forUser(ceres);
  });
  after(async () => {
    if (ids.length > 0) {
      await client.action('kill', ids);
      await client.waitFor(ids, ENDED, 60_000);
    }
    await client?.close();
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  const infoMessages = async (id: string): Promise<string[]> => {
    const [i] = await client.action('info', [id]);
    return messages(i.info_document);
  };

  it('pending for Resources: in its info document and in ceres admin show; running: no more', async () => {
    const cpus = Number(/CPUTot=(\d+)/.exec(slurm.cmd('scontrol', ['show', 'node', '-o']))?.[1]);
    assert.ok(cpus > 0, 'the node says its CPUs');
    const [big] = await client.submit(`&(executable="/bin/sleep")(arguments="600")(count=${cpus})`);
    ids.push(big.id as string);
    await client.waitFor([big.id as string], ['RUNNING'], 60_000);
    const [small] = await client.submit('&(executable="/bin/true")');
    const id = small.id as string;
    ids.push(id);
    await untilValue("Slurm's reason in the info document", async () =>
      (await infoMessages(id)).includes(REASON) ? true : undefined,
    );
    const shown = await ceresCli([
      'admin',
      '--config',
      join(ceres!.stateDir, 'test-config.json'),
      '--state-dir',
      ceres!.stateDir,
      '--json',
      'show',
      id,
    ]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(shown.json().waiting, REASON.slice('Waiting: '.length));
    // The big job goes: the small one runs (or is done) and says nothing more.
    await client.action('kill', [big.id as string]);
    await client.waitFor([id], ['RUNNING', 'FINISHING', 'FINISHED'], 60_000);
    assert.deepEqual(
      (await infoMessages(id)).filter((m) => m.startsWith('Waiting: ')),
      [],
    );
  });
});
