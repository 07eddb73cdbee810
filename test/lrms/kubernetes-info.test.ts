// The info document of a Kubernetes site: capacity and the execution environment from the
// nodes the (fake) API server lists, one list per interval, counts of the pods per queue,
// published through the same GLUE2 source as the other backends (XML and LDIF).
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeKubeApi, fakeNode } from '../helpers/fake-kube-api.js';
import { kubeBackend, kubeconfigFor, kubeSpec } from './kubernetes-fixture.js';
import { until } from './backend.case.js';
import type { BatchJobSpec, BatchUpdate } from '../../src/lrms/backend.js';
import type { KubernetesBackendOptions } from '../../src/lrms/kubernetes/kubernetes-backend.js';
import { parseQuantity } from '../../src/lrms/kubernetes/quantity.js';
import { nodeShapes } from '../../src/lrms/kubernetes/node-capacity.js';
import { buildConfig } from '../../src/config/load.js';
import { createInfoSource } from '../../src/info/info-source.js';
import { renderGlue2Ldif } from '../../src/info/glue2-ldif.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { findElement as find, elementText as text } from '../helpers/xml-find.js';
import type { XmlElement } from '../../src/doc/element.js';

let fake: FakeKubeApi;
let dir = '';
let kubeconfig = '';
let seq = 0;

// fake-node-1 is where the fake kubelet binds every pod; the others are listed only.
const NODES = [
  fakeNode('fake-node-1', { cpu: '3920m', memory: '16215976Ki' }),
  fakeNode('big', { cpu: '16', memory: '65742724Ki' }),
  fakeNode('cordoned', { cpu: '8', unschedulable: true }),
  fakeNode('down', { cpu: '8', ready: false }),
];

before(async () => {
  fake = await FakeKubeApi.start({ nodeCpus: 8 });
  fake.setNodes(NODES);
  dir = await mkdtemp(join(tmpdir(), 'ceres-kube-info-'));
  kubeconfig = await kubeconfigFor(fake, dir);
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

const warnings: string[] = [];

async function backend(t: TestContext, patch: Partial<KubernetesBackendOptions> = {}, config = kubeconfig) {
  const b = await kubeBackend(config, join(dir, 'work'), {
    queues: ['main', 'short'],
    log: { warn: (_o, msg) => void warnings.push(msg) },
    ...patch,
  });
  const updates: { localId: string; update: BatchUpdate }[] = [];
  b.onUpdate((localId, update) => void updates.push({ localId, update }));
  t.after(() => b.close());
  return { b, updates };
}

const spec = (script: string, patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> =>
  kubeSpec(dir, `kinfo${++seq}`, script, patch);

/** Every element of a name in a built document, depth first. */
function allElements(e: XmlElement, name: string, out: XmlElement[] = []): XmlElement[] {
  if (e.name === name) out.push(e);
  for (const c of e.children) if (typeof c !== 'string') allElements(c, name, out);
  return out;
}

const nodeLists = (): number => fake.requests.filter((r) => r.startsWith('GET /api/v1/nodes')).length;

describe('kubernetes info document', () => {
  it('reads capacity from the Ready, schedulable nodes and counts the pods per queue', async (t) => {
    const { b, updates } = await backend(t);
    await b.refreshClusterInfo();
    const before = b.clusterInfo();
    assert.ok(before);
    // 3920m is 3 whole slots; every node counts in the total, only Ready and uncordoned ones are free.
    assert.equal(before.totalNodes, 4);
    assert.equal(before.totalSlots, 3 + 16 + 8 + 8);
    assert.equal(before.freeSlots, 3 + 16);
    assert.deepEqual(before.executionEnvironment, {
      logicalCpus: 16,
      mainMemoryBytes: 65742724 * 1024,
      platform: 'amd64',
      osFamily: 'linux',
    });
    // A pod runs on one node: at most the 16 CPUs of `big` (the cordoned and the down nodes count for nothing).
    assert.deepEqual(
      before.queues.map((q) => [
        q.name,
        q.up,
        q.runningJobs,
        q.waitingJobs,
        q.largestNodeMemoryBytes,
        q.maxSlotsPerJob,
      ]),
      [
        ['main', true, 0, 0, 65742724 * 1024, 16],
        ['short', true, 0, 0, 65742724 * 1024, 16],
      ],
    );
    assert.equal(before.queues[0]?.maxJobMemoryBytes, 65742724 * 1024, "one job's memory in all: big's");
    const id = await b.submit(await spec('sleep 600', { queue: 'main', slots: 2 }));
    await until('the job running', () =>
      updates.some((u) => u.localId === id && u.update.kind === 'state' && u.update.state === 'RUNNING'),
    );
    const during = b.clusterInfo()!;
    assert.equal(during.freeSlots, 1 + 16, 'the running pod asks for 2 CPUs of fake-node-1');
    assert.deepEqual(
      during.queues.map((q) => [q.name, q.runningJobs, q.waitingJobs]),
      [
        ['main', 1, 0],
        ['short', 0, 0],
      ],
    );
    await b.cancel(id);
    await until('the job cancelled', () => updates.some((u) => u.localId === id && u.update.kind === 'final'));
  });

  it('lists the nodes once per interval, however often the document is read', async (t) => {
    const { b } = await backend(t, { infoRefreshMs: 60_000 });
    const first = nodeLists();
    await b.refreshClusterInfo();
    for (let i = 0; i < 200; i++) b.clusterInfo();
    assert.equal(nodeLists() - first, 1);
  });

  it('lists them again once the figures are older than the interval', async (t) => {
    const { b } = await backend(t, { infoRefreshMs: 100 });
    await b.refreshClusterInfo();
    const first = nodeLists();
    fake.setNodes([...NODES, fakeNode('added', { cpu: '2' })]);
    t.after(() => fake.setNodes(NODES));
    await until('the added node counted', () => b.clusterInfo()?.totalNodes === 5);
    assert.ok(nodeLists() - first >= 1);
  });

  it('without the right to list nodes (403) it has no figures, says why, and does not ask per read', async (t) => {
    warnings.length = 0;
    const forbidden = await kubeconfigFor(fake, dir, fake.forbiddenToken);
    const { b } = await backend(t, { infoRefreshMs: 60_000 }, forbidden);
    await b.refreshClusterInfo();
    const first = nodeLists();
    for (let i = 0; i < 50; i++) assert.equal(b.clusterInfo(), undefined);
    assert.equal(nodeLists(), first, 'a refused list is not repeated on every read');
    assert.ok(
      warnings.some((w) => /cannot list the nodes.*403/.test(w)),
      `a warning names the 403: ${warnings.join('; ')}`,
    );
  });

  it('keeps the last figures while the API server is down', async (t) => {
    const { b } = await backend(t, { infoRefreshMs: 100 });
    await b.refreshClusterInfo();
    assert.equal(b.clusterInfo()?.totalNodes, 4);
    await fake.down();
    t.after(() => fake.up());
    await new Promise((r) => setTimeout(r, 150)); // past the interval: the next read asks again
    await b.refreshClusterInfo();
    assert.equal(b.clusterInfo()?.totalNodes, 4);
  });

  it('a cluster whose nodes are all NotReady or cordoned publishes its queues as closed with no free slots', async (t) => {
    fake.setNodes([NODES[2]!, NODES[3]!]);
    t.after(() => fake.setNodes(NODES));
    const { b } = await backend(t);
    await b.refreshClusterInfo();
    const c = b.clusterInfo()!;
    assert.equal(c.freeSlots, 0);
    assert.deepEqual(
      c.queues.map((q) => q.up),
      [false, false],
    );
  });

  it('the GLUE2 document (XML and LDIF) describes the nodes, not the service host', async (t) => {
    const { b } = await backend(t);
    await b.refreshClusterInfo();
    const sdir = mkdtempSync(join(tmpdir(), 'ceres-kube-info-db-'));
    const db = openDatabase(join(sdir, 'db'));
    t.after(() => {
      db.close();
      rmSync(sdir, { recursive: true, force: true });
    });
    // `short` configures more slots per job than a node has: the lower figure is published.
    const config = buildConfig({
      stateDir: sdir,
      cluster: { queues: [{ name: 'main' }, { name: 'short', maxSlotsPerJob: 64 }] },
    });
    const source = createInfoSource({
      config,
      store: new JobStore(db),
      endpointUrl: () => 'https://ce.example.org/arex',
      hostname: 'ce.example.org',
      sessionSpace: () => ({ totalBytes: 100, freeBytes: 50 }),
      lrms: { name: 'kubernetes' },
      cluster: () => b.clusterInfo(),
      trustedCas: [],
      startTime: new Date(0),
    });
    const doc = source.document();
    const ee = find(doc, 'ExecutionEnvironment')!;
    assert.equal(text(ee, 'TotalInstances'), '4');
    assert.equal(text(ee, 'LogicalCPUs'), '16');
    assert.equal(text(ee, 'MainMemorySize'), String(Math.floor((65742724 * 1024) / 2 ** 20)));
    assert.equal(text(ee, 'Platform'), 'amd64');
    assert.equal(text(ee, 'OSFamily'), 'linux');
    assert.equal(text(ee, 'CPUModel'), undefined, "the service host's CPU model is not the nodes'");
    assert.equal(text(doc, 'TotalSlots'), String(3 + 16 + 8 + 8));
    const shares = allElements(doc, 'ComputingShare');
    for (const name of ['main', 'short']) {
      const share = shares.find((e) => text(e, 'Name') === name);
      assert.ok(share, `the share of ${name}`);
      assert.equal(text(share, 'MaxSlotsPerJob'), '16', `MaxSlotsPerJob of ${name}`);
    }
    const ldif = renderGlue2Ldif(doc);
    assert.deepEqual(ldif.problems, []);
    assert.match(ldif.text, /^GLUE2ExecutionEnvironmentTotalInstances: 4$/m);
    assert.match(ldif.text, /^GLUE2ExecutionEnvironmentLogicalCPUs: 16$/m);
  });
});

describe('kubernetes quantities', () => {
  it('reads the forms the API server writes', () => {
    assert.equal(parseQuantity('4'), 4);
    assert.equal(parseQuantity('3920m'), 3.92);
    assert.equal(parseQuantity('16215976Ki'), 16215976 * 1024);
    assert.equal(parseQuantity('64G'), 64e9);
    assert.equal(parseQuantity('1e9'), 1e9);
    assert.equal(parseQuantity('2E'), 2e18);
    assert.equal(parseQuantity('0.5Gi'), 2 ** 29);
  });
  it('refuses what is no quantity (undefined, never NaN)', () => {
    for (const bad of ['', 'Ki', 'abc', '1e', '1.2.3', '4 cores', '1Kb', '--1', '1e999999'])
      assert.equal(parseQuantity(bad), undefined, bad);
    assert.equal(parseQuantity(undefined), undefined);
  });
});

describe('kubernetes node shapes (what one pod can have on one node)', () => {
  it('keeps each Ready, schedulable node that no other exceeds in both CPUs and memory, most CPUs first', () => {
    const shapes = nodeShapes([
      fakeNode('cpus', { cpu: '16500m', memory: '4194304Ki' }),
      fakeNode('memory', { cpu: '2', memory: '67108864Ki' }),
      fakeNode('both', { cpu: '8', memory: '16777216Ki' }),
      fakeNode('covered', { cpu: '8', memory: '8388608Ki' }),
      fakeNode('same', { cpu: '8', memory: '16777216Ki' }),
      fakeNode('cordoned', { cpu: '64', memory: '536870912Ki', unschedulable: true }),
      fakeNode('down', { cpu: '64', memory: '536870912Ki', ready: false }),
    ]);
    assert.deepEqual(shapes, [
      { slots: 16, memoryBytes: 4 * 2 ** 30 },
      { slots: 8, memoryBytes: 16 * 2 ** 30 },
      { slots: 2, memoryBytes: 64 * 2 ** 30 },
    ]);
    assert.deepEqual(nodeShapes([]), []);
  });
});
