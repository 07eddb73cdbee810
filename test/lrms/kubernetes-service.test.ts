// The service on the Kubernetes backend (against the fake API server): a pod runs on one node,
// so a queue's most slots per job are the largest schedulable node's CPUs. They are published
// (GLUE2 MaxSlotsPerJob) and a job asking for more is refused at submission with a per-item
// 4xx naming the limit, and so is one asking more memory in all than that node has (slots
// times memory per slot); before, both were accepted and failed only after the pending timeout.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { FakeKubeApi, fakeNode } from '../helpers/fake-kube-api.js';
import { kubeconfigFor } from './kubernetes-fixture.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

describe('Kubernetes node limits at submission', () => {
  let fake: FakeKubeApi;
  let ceres: RunningCeres | undefined;
  let client: Client;
  let work = '';
  before(async () => {
    fake = await FakeKubeApi.start({ nodeCpus: 8 });
    // The largest schedulable node has 12 CPUs; the cordoned and the NotReady ones are larger.
    fake.setNodes([
      fakeNode('fake-node-1', { cpu: '8' }),
      fakeNode('mid', { cpu: '12500m' }),
      fakeNode('cordoned', { cpu: '64', unschedulable: true }),
      fakeNode('down', { cpu: '64', ready: false }),
    ]);
    work = tempDir('kube-service');
    const state = join(work, 'state');
    ceres = await startCeres({
      stateDir: state,
      config: {
        cluster: { queues: [{ name: 'main' }, { name: 'wide', maxSlotsPerJob: 100 }] },
        lrms: {
          backend: 'kubernetes',
          kubernetes: {
            kubeconfig: await kubeconfigFor(fake, work),
            namespace: 'grid',
            volume: { kind: 'hostPath', mountPath: join(state, 'sessions') },
            // Far beyond the test: a refusal must not come from it.
            pendingTimeoutMs: 3_600_000,
          },
        },
      },
    });
    client = Client.forUser(ceres);
  });
  after(async () => {
    await client?.close();
    if (ceres) await stopCeres(ceres);
    await fake?.close();
    if (work) removeDir(work);
  });

  const item = async (xrsl: string): Promise<{ status: string; code?: string; reason?: string; id?: string }> => {
    const [j] = await client.submit(xrsl);
    return { status: j['status-code'], code: j.code, reason: j.reason, id: j.id };
  };

  it('publishes MaxSlotsPerJob as the largest schedulable node’s whole CPUs, the lower one where configured', async () => {
    const doc = (await client.req('GET', '/rest/1.0/info', undefined, { accept: 'application/xml' })).text;
    for (const name of ['main', 'wide']) {
      const share = doc.split('<ComputingShare ').find((s) => s.includes(`<Name>${name}</Name>`));
      assert.ok(share, `the share of ${name}`);
      assert.match(share, /<MaxSlotsPerJob>12<\/MaxSlotsPerJob>/, name);
    }
  });

  it('refuses a job asking for more slots than that node has, naming the limit', async () => {
    for (const queue of ['main', 'wide']) {
      const r = await item(`&(executable="/bin/true")(count=13)(queue="${queue}")`);
      assert.equal(r.id, undefined);
      assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
      assert.match(r.status, /^4\d\d$/);
      assert.equal(
        r.reason,
        `Requested slot count (13 slots) exceeds the limit of queue ${queue} (12 slots, the limit of the largest Kubernetes node)`,
      );
    }
  });

  it("refuses a job whose memory in all (slots times memory per slot) is more than that node's", async () => {
    // 16215976Ki allocatable (fakeNode's default): 15,835 MiB per node; 2 x 10,000 MiB do not fit one.
    const node = 16215976 * 1024;
    const r = await item('&(executable="/bin/true")(count=2)(memory=10000)(queue="main")');
    assert.equal(r.id, undefined);
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.equal(
      r.reason,
      `Requested memory of the job (${2 * 10000 * 2 ** 20} bytes) exceeds the limit of queue main (${node} bytes, the limit of the largest Kubernetes node)`,
    );
    const one = await item('&(executable="/bin/true")(count=1)(memory=10000)(queue="main")');
    assert.equal(one.status, '201', one.reason);
  });

  it('accepts a job of exactly that many slots', async () => {
    const r = await item('&(executable="/bin/true")(count=12)(queue="main")');
    assert.equal(r.status, '201', r.reason);
    assert.ok(r.id);
  });
});
