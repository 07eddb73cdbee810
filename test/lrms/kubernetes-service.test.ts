// The service on the Kubernetes backend (against the fake API server): a pod runs on one node,
// so a queue's most slots per job are the largest schedulable node's CPUs. They are published
// (GLUE2 MaxSlotsPerJob) and a job asking for more is refused at submission with a per-item
// 4xx naming the limit, and so is one asking more memory in all than that node has (slots
// times memory per slot); before, both were accepted and failed only after the pending timeout.
// Slots and memory are weighed together against each node: where one node has the CPUs and
// another the memory, a job needing both fits neither and is refused too (before, it passed
// both maxima and failed only at its pod).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { FakeKubeApi, fakeNode } from '../helpers/fake-kube-api.js';
import { kubeconfigFor } from './kubernetes-fixture.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

interface Item {
  status: string;
  code?: string;
  reason?: string;
  id?: string;
}

/** The service on a fake cluster of `nodes`, for the tests of one describe(). */
function serviceOn(nodes: () => V1Node[]): { item(xrsl: string): Promise<Item>; client(): Client } {
  let fake: FakeKubeApi | undefined;
  let ceres: RunningCeres | undefined;
  let client: Client | undefined;
  let work = '';
  before(async () => {
    fake = await FakeKubeApi.start({ nodeCpus: 8 });
    fake.setNodes(nodes());
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
  return {
    client: () => client as Client,
    item: async (xrsl) => {
      const [j] = await (client as Client).submit(xrsl);
      return { status: j['status-code'], code: j.code, reason: j.reason, id: j.id };
    },
  };
}

describe('Kubernetes node limits at submission', () => {
  // The largest schedulable node has 12 CPUs; the cordoned and the NotReady ones are larger.
  const s = serviceOn(() => [
    fakeNode('fake-node-1', { cpu: '8' }),
    fakeNode('mid', { cpu: '12500m' }),
    fakeNode('cordoned', { cpu: '64', unschedulable: true }),
    fakeNode('down', { cpu: '64', ready: false }),
  ]);

  it('publishes MaxSlotsPerJob as the largest schedulable node’s whole CPUs, the lower one where configured', async () => {
    const doc = (await s.client().req('GET', '/rest/1.0/info', undefined, { accept: 'application/xml' })).text;
    for (const name of ['main', 'wide']) {
      const share = doc.split('<ComputingShare ').find((x) => x.includes(`<Name>${name}</Name>`));
      assert.ok(share, `the share of ${name}`);
      assert.match(share, /<MaxSlotsPerJob>12<\/MaxSlotsPerJob>/, name);
    }
  });

  it('refuses a job asking for more slots than that node has, naming the limit', async () => {
    for (const queue of ['main', 'wide']) {
      const r = await s.item(`&(executable="/bin/true")(count=13)(queue="${queue}")`);
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
    const r = await s.item('&(executable="/bin/true")(count=2)(memory=10000)(queue="main")');
    assert.equal(r.id, undefined);
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.equal(
      r.reason,
      `Requested memory of the job (${2 * 10000 * 2 ** 20} bytes) exceeds the limit of queue main (${node} bytes, the limit of the largest Kubernetes node)`,
    );
    const one = await s.item('&(executable="/bin/true")(count=1)(memory=10000)(queue="main")');
    assert.equal(one.status, '201', one.reason);
  });

  it('accepts a job of exactly that many slots', async () => {
    const r = await s.item('&(executable="/bin/true")(count=12)(queue="main")');
    assert.equal(r.status, '201', r.reason);
    assert.ok(r.id);
  });
});

describe('Kubernetes: slots and memory together against each node', () => {
  const GiB = 2 ** 30;
  // One node has the CPUs, another the memory; a third has some of both. The cordoned node
  // would hold anything and counts for nothing.
  const s = serviceOn(() => [
    fakeNode('cpus', { cpu: '16', memory: `${4 * 1024 * 1024}Ki` }),
    fakeNode('memory', { cpu: '2', memory: `${64 * 1024 * 1024}Ki` }),
    fakeNode('both', { cpu: '8', memory: `${16 * 1024 * 1024}Ki` }),
    fakeNode('cordoned', { cpu: '64', memory: `${512 * 1024 * 1024}Ki`, unschedulable: true }),
  ]);

  it('refuses a job under the most CPUs and under the most memory that fits no single node, naming the limit', async () => {
    // 12 slots of 2 GiB: 24 GiB in all. The 16-CPU node has 4 GiB, the 64 GiB node 2 CPUs.
    const r = await s.item('&(executable="/bin/true")(count=12)(memory=2048)(queue="main")');
    assert.equal(r.id, undefined, 'no job');
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.match(r.status, /^4\d\d$/);
    assert.equal(
      r.reason,
      `Requested memory of the job (${24 * GiB} bytes) exceeds the limit of queue main for 12 slots (${4 * GiB} bytes, the most memory of one node with 12 CPUs or more)`,
    );
    // 6 slots: the 8-CPU node's 16 GiB is the limit.
    const six = await s.item('&(executable="/bin/true")(count=6)(memory=3072)(queue="wide")');
    assert.equal(six.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.match(
      six.reason ?? '',
      /for 6 slots \(17179869184 bytes, the most memory of one node with 6 CPUs or more\)$/,
    );
  });

  it('accepts what one node holds: many CPUs with little memory, much memory on few CPUs, both at the edge', async () => {
    for (const xrsl of [
      '(count=16)(memory=256)', // 4 GiB on the 16-CPU node
      '(count=2)(memory=32768)', // 64 GiB on the 2-CPU node
      '(count=8)(memory=2048)', // 16 GiB on the 8-CPU node
      '(count=12)', // no memory asked: CPUs alone
    ]) {
      const r = await s.item(`&(executable="/bin/true")${xrsl}(queue="main")`);
      assert.equal(r.status, '201', `${xrsl}: ${r.reason}`);
    }
  });

  it('a job over every node in one respect still gets that limit, not the pair', async () => {
    const r = await s.item('&(executable="/bin/true")(count=17)(memory=100)(queue="main")');
    assert.match(r.reason ?? '', /^Requested slot count \(17 slots\) exceeds the limit of queue main \(16 slots/);
  });
});
