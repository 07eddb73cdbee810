// The Kubernetes backend against the fake API server: what the conformance suite does not
// reach. The Job it makes, creation throttling, and the failure paths: image pull back-off,
// unschedulable, eviction, the API server down (submit and watch), a 410 on watch, a Job
// deleted behind Ceres's back, 401 and 403.
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeKubeApi, fakeNode } from '../helpers/fake-kube-api.js';
import { kubeBackend, kubeconfigFor, kubeSpec } from './kubernetes-fixture.js';
import { until } from './backend.case.js';
import type { BatchJobSpec, BatchResult, BatchUpdate } from '../../src/lrms/backend.js';
import type { KubernetesBackend, KubernetesBackendOptions } from '../../src/lrms/kubernetes/kubernetes-backend.js';
import { isCeError } from '../../src/errors/ce-error.js';

let fake: FakeKubeApi;
let dir = '';
let kubeconfig = '';
let seq = 0;

before(async () => {
  fake = await FakeKubeApi.start({ badImages: ['registry.invalid/missing:1'], nodeCpus: 8 });
  dir = await mkdtemp(join(tmpdir(), 'ceres-kube-'));
  kubeconfig = await kubeconfigFor(fake, dir);
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  readonly b: KubernetesBackend;
  readonly updates: Array<{ localId: string; update: BatchUpdate }>;
  final(localId: string): Promise<BatchResult>;
}

async function backend(
  t: TestContext,
  patch: Partial<KubernetesBackendOptions> = {},
  config = kubeconfig,
): Promise<Run> {
  const b = await kubeBackend(config, join(dir, 'work'), patch);
  const updates: Run['updates'] = [];
  b.onUpdate((localId, update) => void updates.push({ localId, update }));
  t.after(() => b.close());
  const final = async (localId: string): Promise<BatchResult> => {
    let r: BatchResult | undefined;
    await until(`the final update of ${localId}`, () => {
      const u = updates.find((x) => x.localId === localId && x.update.kind === 'final')?.update;
      r = u?.kind === 'final' ? u.result : undefined;
      return r !== undefined;
    });
    return r!;
  };
  return { b, updates, final };
}

const spec = (script: string, patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> =>
  kubeSpec(dir, `kjob${++seq}`, script, { stdout: 'out.txt', stderr: 'err.txt', ...patch });

const states = (r: Run, localId: string): string[] =>
  r.updates.flatMap((u) =>
    u.localId === localId && u.update.kind === 'state' ? [`${u.update.state}/${u.update.native ?? ''}`] : [],
  );
const count = (prefix: string): number => fake.requests.filter((r) => r.startsWith(prefix)).length;

describe('kubernetes backend', () => {
  it('makes a batch/v1 Job as the description asks: no retries, disruptions ignored, deadline, resources, volume, TTL', async (t) => {
    const r = await backend(t);
    const s = await spec('echo hi', { queue: 'bad', slots: 2, limits: { wallTimeSeconds: 90, memoryBytes: 2 ** 30 } });
    const id = await r.b.submit({ ...s, queue: undefined });
    await r.final(id);
    const job = fake.jobs().find((j) => j.metadata?.name === id);
    assert.ok(job, 'the Job exists until its TTL');
    assert.equal(job.spec?.backoffLimit, 0);
    assert.equal(job.spec?.activeDeadlineSeconds, 90);
    assert.equal(job.spec?.ttlSecondsAfterFinished, 60);
    assert.deepEqual(job.spec?.podFailurePolicy?.rules, [
      { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    ]);
    const pod = job.spec?.template.spec;
    assert.equal(pod?.restartPolicy, 'Never');
    const c = pod?.containers[0];
    assert.equal(c?.image, 'debian:bookworm-slim');
    assert.deepEqual(c?.resources?.limits, { cpu: '2', memory: String(2 ** 30) });
    assert.equal(c?.workingDir, s.sessionDir);
    assert.deepEqual(pod?.volumes, [{ name: 'sessions', hostPath: { path: '/tmp', type: 'Directory' } }]);
    assert.equal(readFileSync(join(s.sessionDir, 'out.txt'), 'utf8'), 'hi\n');
  });

  it('the pod can reach no API credential and gain no privilege: no service account token, no service links, no escalation, no capabilities, seccomp', async (t) => {
    // A job is the user's code: with the namespace's service account token mounted (the
    // default) it could talk to the Kubernetes API as that account; with a setuid binary
    // in its image, become root in the container, on the sessions volume of every job.
    const r = await backend(t);
    const id = await r.b.submit(await spec('echo hi'));
    await r.final(id);
    const pod = fake.jobs().find((j) => j.metadata?.name === id)?.spec?.template.spec;
    assert.equal(pod?.automountServiceAccountToken, false);
    assert.equal(pod?.enableServiceLinks, false);
    assert.deepEqual(pod?.securityContext?.seccompProfile, { type: 'RuntimeDefault' });
    assert.deepEqual(pod?.containers[0]?.securityContext, {
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('a job without a mapped account runs as the service account, as on every other backend, not as the image default user', async (t) => {
    // The image's default user is often root: a container of uid 0 owns whatever uid 0 owns
    // on the sessions volume (the sessions root of a service run as root, so it could
    // rename or remove any job's session directory), and a non-root service's own job
    // could not write its session directory. A job without an account is the service's
    // account's job (the fork backend runs it as that account).
    const r = await backend(t);
    const id = await r.b.submit(await spec('echo hi'));
    await r.final(id);
    const sc = fake.jobs().find((j) => j.metadata?.name === id)?.spec?.template.spec?.securityContext;
    const uid = process.getuid!();
    const gid = process.getgid!();
    assert.equal(sc?.runAsUser, uid);
    assert.equal(sc?.runAsGroup, gid);
    assert.equal(sc?.fsGroup, gid);
    // Kubernetes itself refuses a uid 0 there then; a service run as root maps every job to
    // an account (accounts.default), so only a direct backend user ever meets uid 0.
    assert.equal(sc?.runAsNonRoot, uid !== 0 ? true : undefined);
  });

  it('a job meant for a local account is refused when the backend cannot resolve accounts, never run as the service account', async (t) => {
    const r = await backend(t);
    const s = { ...(await spec('id')), localAccount: 'atlas001' };
    await assert.rejects(
      r.b.submit(s),
      (e: Error & { code?: string }) => e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /atlas001/.test(e.message),
    );
    assert.ok(!fake.jobs().some((j) => j.metadata?.labels?.['ceres.grid/job-id'] === s.jobId.slice(0, 63)));
  });

  it('throttles creation to createPerSecond', async (t) => {
    const r = await backend(t, { createPerSecond: 4 });
    const specs = await Promise.all([1, 2, 3, 4, 5].map(() => spec('true')));
    const start = Date.now();
    const ids = await Promise.all(specs.map((s) => r.b.submit(s)));
    // Five creations at 4 a second: the last one at least a second after the first.
    assert.ok(Date.now() - start >= 900, `took ${Date.now() - start} ms`);
    for (const id of ids) assert.equal((await r.final(id)).exitCode, 0);
  });

  it('an image that cannot be pulled fails the job with the reason after the pending timeout, and its Job is deleted', async (t) => {
    const r = await backend(t);
    const id = await r.b.submit(await spec('echo never', { queue: 'bad' }));
    const res = await r.final(id);
    assert.match(res.failureReason ?? '', /^kubernetes: (ErrImagePull|ImagePullBackOff): .*registry\.invalid/);
    assert.equal(res.exitCode, null);
    assert.ok(
      states(r, id).some((x) => /ErrImagePull|ImagePullBackOff/.test(x)),
      states(r, id).join(),
    );
    await until('the Job deleted', () => !fake.jobs().some((j) => j.metadata?.name === id));
  });

  it('an unschedulable pod that a listed node could hold waits, and fails with the scheduler message after the pending timeout', async (t) => {
    // `big` could hold it once free: the pod waits for room, not for a node that does not exist.
    fake.setNodes([fakeNode('fake-node-1', { cpu: '8' }), fakeNode('big', { cpu: '128' })]);
    t.after(() => fake.setNodes([fakeNode('fake-node-1', { cpu: '8' })]));
    const r = await backend(t, { pendingTimeoutMs: 1500 });
    await r.b.refreshClusterInfo();
    const start = Date.now();
    const id = await r.b.submit(await spec('echo never', { slots: 64 }));
    const res = await r.final(id);
    assert.ok(Date.now() - start >= 1400, `failed after ${Date.now() - start} ms, before the pending timeout`);
    assert.match(res.failureReason ?? '', /^kubernetes: Unschedulable: 0\/1 nodes are available: 1 Insufficient cpu/);
    assert.doesNotMatch(res.failureReason ?? '', /largest schedulable node/);
    assert.ok(states(r, id).includes('QUEUING/Unschedulable'), states(r, id).join());
  });

  /** Submit `patch` with a pending timeout far beyond the wait: the final update must come from the node check. */
  const neverFits = async (t: TestContext, patch: Partial<BatchJobSpec>, known: boolean) => {
    const r = await backend(t, { pendingTimeoutMs: 600_000 });
    if (known) await r.b.refreshClusterInfo();
    const lists = count('GET /api/v1/nodes');
    const id = await r.b.submit(await spec('echo never', patch));
    const res = await r.final(id);
    await until('the Job deleted', () => !fake.jobs().some((j) => j.metadata?.name === id));
    return { res, id, r, lists: count('GET /api/v1/nodes') - lists };
  };

  it('a pod asking more CPUs than the largest node has fails at once with the reason, the node list asked for then', async (t) => {
    const { res, id, r, lists } = await neverFits(t, { slots: 64 }, false);
    assert.equal(
      res.failureReason,
      'kubernetes: Unschedulable: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod. (it asks for 64 CPUs, the largest schedulable node has 8)',
    );
    assert.equal(res.exitCode, null);
    assert.ok(states(r, id).includes('QUEUING/Unschedulable'), states(r, id).join());
    assert.equal(lists, 1, 'the unknown node list is asked for once');
  });

  it("a pod asking more memory than the largest node has (the job's: slots times memory per slot) fails at once", async (t) => {
    const { res, lists } = await neverFits(t, { slots: 2, limits: { memoryBytes: 20 * 2 ** 30 } }, true);
    assert.match(
      res.failureReason ?? '',
      /^kubernetes: Unschedulable: .*Insufficient memory.*\(it asks for 21474836480 bytes of memory, the largest schedulable node has 16605159424\)$/,
    );
    assert.ok(lists <= 1);
  });

  it('a node that could hold the pod but is cordoned or not Ready does not count', async (t) => {
    fake.setNodes([
      fakeNode('fake-node-1', { cpu: '8' }),
      fakeNode('cordoned', { cpu: '128', unschedulable: true }),
      fakeNode('down', { cpu: '128', ready: false }),
    ]);
    t.after(() => fake.setNodes([fakeNode('fake-node-1', { cpu: '8' })]));
    const { res } = await neverFits(t, { slots: 64 }, true);
    assert.match(res.failureReason ?? '', /\(it asks for 64 CPUs, the largest schedulable node has 8\)$/);
  });

  it('an evicted pod is replaced (the failure policy ignores disruptions) and the job ends by itself', async (t) => {
    const r = await backend(t);
    const s = await spec('echo run >> runs.txt; while [ ! -f go ]; do sleep 0.05; done; exit 3');
    const id = await r.b.submit(s);
    await until('the job running', () => states(r, id).includes('RUNNING/Running'));
    await until('the job started', () => existsSync(join(s.sessionDir, 'runs.txt')));
    assert.ok(fake.evict(id));
    await until('a second run', () => readFileSync(join(s.sessionDir, 'runs.txt'), 'utf8') === 'run\nrun\n');
    await writeFile(join(s.sessionDir, 'go'), '');
    const res = await r.final(id);
    assert.equal(res.exitCode, 3);
    assert.equal(res.failureReason, undefined);
    assert.ok(states(r, id).includes('QUEUING/DisruptionTarget'), states(r, id).join());
  });

  it('a Job deleted behind its back ends the job as lost', async (t) => {
    const r = await backend(t);
    const id = await r.b.submit(await spec('sleep 600'));
    await until('the job running', () => states(r, id).includes('RUNNING/Running'));
    fake.deleteJob(id);
    const res = await r.final(id);
    assert.match(res.failureReason ?? '', /^job lost: /);
  });

  it('cancel deletes the Job with propagationPolicy Background and reports cancelled once it is gone', async (t) => {
    const r = await backend(t);
    const id = await r.b.submit(await spec('sleep 600'));
    await until('the job running', () => states(r, id).includes('RUNNING/Running'));
    assert.equal(await r.b.cancel(id), true);
    assert.equal((await r.final(id)).failureReason, 'cancelled');
    assert.ok(
      fake.requests.some(
        (q) =>
          q.startsWith(`DELETE /apis/batch/v1/namespaces/grid/jobs/${id}?`) &&
          q.includes('propagationPolicy=Background'),
      ),
    );
  });

  it('with the API server down, submit retries and then fails with the reason; up again, it submits', async (t) => {
    const r = await backend(t, { requestAttempts: 3, backoffMs: 50 });
    await fake.down();
    try {
      await assert.rejects(r.b.submit(await spec('true')), (e: unknown) => {
        assert.ok(isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED', String(e));
        assert.match(e.message, /ECONNREFUSED|connect/);
        return true;
      });
      assert.match((await r.b.usable()) ?? '', /./, 'not usable while the API server is down');
    } finally {
      await fake.up();
    }
    const id = await r.b.submit(await spec('true'));
    assert.equal((await r.final(id)).exitCode, 0);
  });

  it('the watch reconnects after the API server was down and sees an end that happened meanwhile', async (t) => {
    const r = await backend(t, { backoffMs: 50 });
    const s = await spec('while [ ! -f go ]; do sleep 0.05; done; exit 5');
    const id = await r.b.submit(s);
    await until('the job running', () => states(r, id).includes('RUNNING/Running'));
    await fake.down();
    try {
      await writeFile(join(s.sessionDir, 'go'), '');
      await until('the pod over', () =>
        fake.pods().some((p) => p.metadata?.name?.startsWith(id) && p.status?.phase === 'Failed'),
      );
      assert.equal(
        r.updates.some((u) => u.localId === id && u.update.kind === 'final'),
        false,
      );
    } finally {
      await fake.up();
    }
    assert.equal((await r.final(id)).exitCode, 5);
  });

  it('a 410 Gone on watch makes it list again, and the end is not lost', async (t) => {
    const r = await backend(t, { backoffMs: 50 });
    const s = await spec('while [ ! -f go ]; do sleep 0.05; done; exit 6');
    const id = await r.b.submit(s);
    await until('the job running', () => states(r, id).includes('RUNNING/Running'));
    const lists = count('GET /apis/batch/v1/namespaces/grid/jobs?labelSelector');
    await fake.down();
    await writeFile(join(s.sessionDir, 'go'), '');
    await until('the pod over', () =>
      fake.pods().some((p) => p.metadata?.name?.startsWith(id) && p.status?.phase === 'Failed'),
    );
    // The history the watch would resume from is compacted away: only a new list finds the end.
    fake.compact();
    await fake.up();
    assert.equal((await r.final(id)).exitCode, 6);
    assert.ok(count('GET /apis/batch/v1/namespaces/grid/jobs?labelSelector') > lists, 'listed again');
  });

  for (const [status, word] of [
    [401, 'Unauthorized'],
    [403, 'forbidden'],
  ] as const) {
    it(`a ${status} from the API server fails the submission at once with its message, not retried`, async (t) => {
      const token = status === 401 ? 'not-a-known-token' : fake.forbiddenToken;
      const r = await backend(t, { requestAttempts: 5, backoffMs: 2000 }, await kubeconfigFor(fake, dir, token));
      const posts = count('POST ');
      const start = Date.now();
      await assert.rejects(r.b.submit(await spec('true')), (e: unknown) => {
        assert.ok(isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED');
        assert.ok(e.message.includes(`HTTP ${status}`), e.message);
        assert.ok(e.message.includes(word), e.message);
        return true;
      });
      assert.equal(count('POST ') - posts, 1, 'one attempt');
      assert.ok(Date.now() - start < 2000, 'no backoff wait');
    });
  }
});
