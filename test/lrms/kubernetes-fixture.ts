// The Kubernetes backend against the fake API server: a kubeconfig for it and backend options.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FakeKubeApi } from '../helpers/fake-kube-api.js';
import type { BatchJobSpec } from '../../src/lrms/backend.js';
import { KubernetesBackend, type KubernetesBackendOptions } from '../../src/lrms/kubernetes/kubernetes-backend.js';

/** A kubeconfig naming the fake server, its CA and a bearer token. */
export async function kubeconfigFor(fake: FakeKubeApi, dir: string, token = fake.token): Promise<string> {
  const file = join(dir, `kubeconfig-${token.slice(0, 8)}`);
  const ca = Buffer.from(fake.ca.pem).toString('base64');
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster: { server: fake.url, 'certificate-authority-data': ca } }],
    users: [{ name: 'ceres', user: { token } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'ceres', namespace: 'grid' } }],
    'current-context': 'fake',
  });
  await writeFile(file, text);
  return file;
}

export function kubeBackend(
  kubeconfig: string,
  workDir: string,
  patch: Partial<KubernetesBackendOptions> = {},
): Promise<KubernetesBackend> {
  return KubernetesBackend.create({
    workDir,
    kubeconfig,
    namespace: 'grid',
    defaultImage: 'debian:bookworm-slim',
    images: { bad: 'registry.invalid/missing:1' },
    runtimeEnvironments: {},
    volume: { kind: 'hostPath', source: '', mountPath: '/tmp' },
    jobNamePrefix: 'ceres-',
    pendingTimeoutMs: 1000,
    createPerSecond: 200,
    ttlSecondsAfterFinished: 60,
    requestAttempts: 3,
    backoffMs: 50,
    infoRefreshMs: 60_000,
    ...patch,
  });
}

/** A job of `sh -c script` with its session and lrms directories under `dir`, named by `jobId`. */
export async function kubeSpec(
  dir: string,
  jobId: string,
  script: string,
  patch: Partial<BatchJobSpec> = {},
): Promise<BatchJobSpec> {
  const sessionDir = join(dir, `session-${jobId}`);
  await mkdir(sessionDir, { recursive: true });
  return {
    jobId,
    sessionDir,
    lrmsDir: join(dir, `lrms-${jobId}`),
    executable: '/bin/sh',
    arguments: ['-c', script],
    environment: [],
    runtimeEnvironments: [],
    limits: {},
    slots: 1,
    ...patch,
  };
}
