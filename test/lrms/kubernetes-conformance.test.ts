// The conformance suite on the Kubernetes backend against the fake API server
// (test/helpers/fake-kube-api.ts), whose kubelet runs each pod's container as a local process.
import { before, after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBackendSuite } from './backend.case.js';
import { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { kubeBackend, kubeconfigFor } from './kubernetes-fixture.js';

let fake: FakeKubeApi;
let dir = '';
let kubeconfig = '';
before(async () => {
  fake = await FakeKubeApi.start();
  dir = await mkdtemp(join(tmpdir(), 'ceres-kube-'));
  kubeconfig = await kubeconfigFor(fake, dir);
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

runBackendSuite({
  name: 'kubernetes (fake API server)',
  newBackend: ({ workDir }) => kubeBackend(kubeconfig, workDir),
  skip: [
    {
      reason:
        'Kubernetes has no CPU time limit: resources.limits.cpu is a CFS quota (a rate, not an amount) and activeDeadlineSeconds bounds wall time only',
      tests: ['cpu-time-limit'],
    },
    {
      reason:
        "the case asks for the job's CPU time: a pod's status has none, and the metrics API (metrics.k8s.io) gives a sampled current rate of running pods, not the CPU seconds of an ended container",
      tests: ['usage'],
    },
    {
      reason:
        "the case asks for the job's peak memory: a pod's status has none, and the metrics API gives the current working set of running pods, not a peak",
      tests: ['max-rss'],
    },
    {
      reason:
        "the case sources an RTE script on the worker; a pod runs no script (it is the site's image): an RTE selects the image instead, tested in kubernetes-rte.test.ts",
      tests: ['runtime-environment'],
    },
  ],
  manyJobs: 50,
  settleMs: 500,
});
