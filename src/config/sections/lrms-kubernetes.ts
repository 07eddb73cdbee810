import { Type } from '@sinclair/typebox';
import { KUBE_NAME_PREFIX, RTE_NAME, ENV_NAME } from '../patterns.js';
import { PATH } from '../paths.js';

/**
 * `lrms.kubernetes`: the Kubernetes batch backend (docs/batch-backends.md, "Kubernetes"). Used
 * when `lrms.backend` is `kubernetes`: each job is a batch/v1 Job in `namespace`, its session
 * directory reached through one volume the site provides, mounted at the same path.
 */
export const lrmsKubernetesSection = Type.Object(
  {
    kubeconfig: Type.String({
      ...PATH,
      default: '',
      description:
        "kubeconfig file naming the API server and the service's credentials; empty: the pod's service account when running in a cluster, else KUBECONFIG or ~/.kube/config",
    }),
    namespace: Type.String({ default: 'default', minLength: 1, description: 'Namespace the Jobs are created in' }),
    defaultImage: Type.String({
      default: 'debian:bookworm-slim',
      minLength: 1,
      description: 'Container image of jobs whose queue has no image of its own',
    }),
    images: Type.Record(Type.String(), Type.String({ minLength: 1 }), {
      default: {},
      description: 'Container image per queue name (the queue a job asks for)',
    }),
    runtimeEnvironments: Type.Record(
      Type.String({ ...RTE_NAME }),
      Type.Object(
        {
          image: Type.String({ minLength: 1, description: 'The container image jobs naming this RTE run in' }),
          env: Type.Record(Type.String({ ...ENV_NAME }), Type.String(), {
            default: {},
            description: "Environment variables the container gets, before the job description's own",
          }),
        },
        { additionalProperties: false },
      ),
      {
        default: {},
        description:
          'Container image (and optional environment) per runtime environment (a name of cluster.runtimeEnvironments); a job naming an RTE without one is refused at submission',
      },
    ),
    volume: Type.Object(
      {
        kind: Type.Union([Type.Literal('persistentVolumeClaim'), Type.Literal('hostPath')], {
          default: 'hostPath',
          description: 'How pods reach the session directories: a PVC of the namespace or a host path on every node',
        }),
        source: Type.String({
          default: '',
          description:
            'The claim name (persistentVolumeClaim) or the host directory (hostPath) holding the session directories; empty with hostPath: mountPath',
        }),
        mountPath: Type.String({
          default: '',
          description:
            'Where that volume is mounted in the pod: the directory holding the session directories, the same path as on the service host (required with this backend)',
        }),
      },
      { default: {}, additionalProperties: false },
    ),
    jobNamePrefix: Type.String({
      default: 'ceres-',
      ...KUBE_NAME_PREFIX,
      description: 'Job names are this prefix and the Ceres job id in lower case (one prefix per Ceres instance)',
    }),
    pendingTimeoutMs: Type.Integer({
      default: 600_000,
      minimum: 100,
      description:
        "A pod that cannot pull its image or cannot be scheduled this long fails the job with Kubernetes's reason",
    }),
    createPerSecond: Type.Number({
      default: 20,
      exclusiveMinimum: 0,
      description: 'Job creations per second at most (a default scheduler places about 30 pods a second)',
    }),
    ttlSecondsAfterFinished: Type.Integer({
      default: 3600,
      minimum: 0,
      description: 'How long Kubernetes keeps a finished Job and its pod (Ceres collects the logs at the end first)',
    }),
    requestAttempts: Type.Integer({
      default: 6,
      minimum: 1,
      description:
        'Attempts of a creation or deletion while the API server does not answer; then it fails with the reason',
    }),
    infoRefreshMs: Type.Integer({
      default: 30_000,
      minimum: 100,
      description:
        'How old the node figures in the info document may get before the nodes are listed again (listed only while the document is read)',
    }),
    backoffMs: Type.Integer({
      default: 1000,
      minimum: 10,
      description:
        'Wait before the first retry of an API request and of a broken watch; doubled each time, at most 30 s',
    }),
  },
  { default: {}, additionalProperties: false },
);
