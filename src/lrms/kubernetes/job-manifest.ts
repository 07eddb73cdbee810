/**
 * The batch/v1 Job a BatchJobSpec becomes. Images differ, so Ceres's C wrapper does not run in
 * the pod: a POSIX shell line does the redirections into the session directory (the log
 * endpoint merges stdout and stderr, so the job's own files must be written in the pod), and
 * usage and exit come from the pod's status.
 */
import { isAbsolute } from 'node:path';
import type { V1Job, V1Volume } from '@kubernetes/client-node';
import type { BatchJobSpec } from '../backend.js';
import type { LocalAccount } from '../../accounts/resolve-account.js';
import { QUEUE_LABEL } from './node-capacity.js';
import type { RteImage, RteImages } from './rte-images.js';

export const MANAGED_BY = 'app.kubernetes.io/managed-by=ceres';
export const CERES_JOB_LABEL = 'ceres.grid/job-id';

export interface ManifestOptions {
  readonly namespace: string;
  readonly defaultImage: string;
  readonly images: Readonly<Record<string, string>>;
  readonly runtimeEnvironments: RteImages;
  readonly volume: {
    readonly kind: 'persistentVolumeClaim' | 'hostPath';
    readonly source: string;
    readonly mountPath: string;
  };
  readonly ttlSecondsAfterFinished: number;
}

/** A label value: at most 63 characters, alphanumeric at both ends, '-', '_' or '.' between. */
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

const q = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** A DNS-1123 label: lower case, digits and '-', at most 63 characters. */
export function jobName(prefix: string, jobId: string): string {
  const id = jobId.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  return `${prefix}${id}`.slice(0, 63).replace(/-+$/, '');
}

/** What the shell line prints (to the pod's log) when the executable is missing; exit 127 as sh. */
export const MISSING_EXECUTABLE = 'ceres: executable not found: ';

/** The shell line the container runs: the job with its stdin, stdout and stderr in the session directory. */
export function jobCommand(spec: BatchJobSpec): string[] {
  const io = (p: string | undefined): string => (p === undefined ? '/dev/null' : q(p));
  const err = spec.join === true ? '&1' : io(spec.stderr);
  const missing = `{ echo ${q(MISSING_EXECUTABLE)}"$1"; exit 127; }`;
  const script = `cd ${q(spec.sessionDir)} || exit 1; [ -f "$1" ] || ${missing}; exec "$@" <${io(spec.stdin)} >${io(spec.stdout)} 2>${err}`;
  const exe = isAbsolute(spec.executable) ? spec.executable : `./${spec.executable}`;
  return ['/bin/sh', '-c', script, 'ceres-job', exe, ...spec.arguments];
}

/**
 * `rte`: the image the job's runtime environments selected (rte-images.ts), which wins over the
 * queue's; its environment comes before the job description's own (which wins, as later).
 */
export function jobManifest(
  name: string,
  spec: BatchJobSpec,
  o: ManifestOptions,
  account?: LocalAccount,
  rte?: RteImage,
): V1Job {
  const mountPath = o.volume.mountPath;
  const volume: V1Volume =
    o.volume.kind === 'persistentVolumeClaim'
      ? { name: 'sessions', persistentVolumeClaim: { claimName: o.volume.source } }
      : { name: 'sessions', hostPath: { path: o.volume.source || mountPath, type: 'Directory' } };
  const image =
    rte?.image ??
    (spec.queue !== undefined && Object.hasOwn(o.images, spec.queue) ? o.images[spec.queue] : undefined) ??
    o.defaultImage;
  const env = [
    ...Object.entries(rte?.env ?? {}).map(([n, value]) => ({ name: n, value })),
    ...spec.environment.map((e) => ({ name: e.name, value: e.value })),
  ];
  const memory = spec.limits.memoryBytes;
  const labels = {
    'app.kubernetes.io/managed-by': 'ceres',
    [CERES_JOB_LABEL]: spec.jobId.slice(0, 63),
    // The info document counts pods per queue; a queue name that is no label value is not counted.
    ...(spec.queue !== undefined && LABEL_VALUE.test(spec.queue) ? { [QUEUE_LABEL]: spec.queue } : {}),
  };
  const [command, ...args] = jobCommand(spec);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: o.namespace, labels },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: o.ttlSecondsAfterFinished,
      ...(spec.limits.wallTimeSeconds !== undefined
        ? { activeDeadlineSeconds: Math.ceil(spec.limits.wallTimeSeconds) }
        : {}),
      // A disruption (eviction, preemption, node drain) is not the job's failure: the Job starts a new pod.
      podFailurePolicy: {
        rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }],
      },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          // The job is the user's code. No API credential: the namespace's service account
          // token is mounted by default, and with it the job could use the Kubernetes API
          // as that account (create pods, read secrets where the site granted it); nor the
          // other services' addresses in its environment.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: { ...runAs(account), seccompProfile: { type: 'RuntimeDefault' } },
          volumes: [volume],
          containers: [
            {
              name: 'job',
              image,
              command: [command!],
              args,
              workingDir: spec.sessionDir,
              env,
              // No way up from the account: a setuid program of the image (su, sudo) gains
              // nothing, and no capability is held, on a volume with every job's session.
              securityContext: { allowPrivilegeEscalation: false, privileged: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'sessions', mountPath }],
              resources: {
                requests: { cpu: String(spec.slots), ...(memory !== undefined ? { memory: String(memory) } : {}) },
                limits: { cpu: String(spec.slots), ...(memory !== undefined ? { memory: String(memory) } : {}) },
              },
            },
          ],
        },
      },
    },
  };
}

/**
 * Who the pod runs as: the job's mapped account, or, for a job without one, the service's own
 * account, as on every other backend, never the image's default user. That is often root: a
 * container of uid 0 (even with no capability) owns what uid 0 owns on the sessions volume,
 * the sessions root of a service run as root among it, and could rename or remove any job's
 * session directory; and a service not run as root could not have its own job write its
 * session directory. A service run as root maps every job (accounts.default), so the uid 0
 * case is only a direct use of the backend; `runAsNonRoot` is set wherever the uid is not 0.
 */
function runAs(account: LocalAccount | undefined): {
  runAsUser: number;
  runAsGroup: number;
  fsGroup: number;
  runAsNonRoot?: true;
} {
  const uid = account?.uid ?? process.getuid!();
  const gid = account?.gid ?? process.getgid!();
  return { runAsUser: uid, runAsGroup: gid, fsGroup: gid, ...(uid !== 0 ? { runAsNonRoot: true } : {}) };
}
