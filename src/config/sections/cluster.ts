import { Type } from '@sinclair/typebox';
import { RTE_NAME, SHORT_NAME } from '../patterns.js';
import { PATH } from '../paths.js';
import { DAY } from '../units.js';

const queue = Type.Object(
  {
    name: Type.String({ ...SHORT_NAME }),
    description: Type.Optional(Type.String()),
    maxWallTimeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    minWallTimeSeconds: Type.Optional(Type.Integer({ minimum: 0 })),
    defaultWallTimeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    maxCpuTimeSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    maxMemoryBytes: Type.Optional(Type.Integer({ minimum: 1 })),
    maxSlotsPerJob: Type.Optional(Type.Integer({ minimum: 1 })),
    allow: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description: 'Authorization groups whose members may use this queue; absent: every allowed caller',
      }),
    ),
  },
  { additionalProperties: false },
);

const rte = Type.Object(
  {
    name: Type.String({ ...RTE_NAME, description: 'e.g. ENV/PROXY or APPS/HEP/ATLAS-SITE' }),
    script: Type.Optional(
      Type.String({
        ...PATH,
        description: 'Shell script sourced by the job wrapper (stage 1) with the RTE options as arguments',
      }),
    ),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** What the cluster offers: name, queues, runtime environments, published in the info document. */
export const clusterSection = {
  cluster: Type.Object(
    {
      name: Type.String({ default: 'ceres', minLength: 1, description: 'Site / admin-domain name published in GLUE2' }),
      hostname: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            'Host name in GLUE2 ids and the service URL; default: the listen address as given (the machine host name for a wildcard address)',
        }),
      ),
      queues: Type.Array(queue, {
        default: [{ name: 'main' }],
        minItems: 1,
        description: 'Batch queues (GLUE2 ComputingShare per queue)',
      }),
      defaultQueue: Type.Optional(
        Type.String({ description: 'Queue used when a job names none; default: the first queue' }),
      ),
      runtimeEnvironments: Type.Array(rte, { default: [], description: 'Runtime environments jobs may request' }),
      sessionLifetimeSeconds: Type.Integer({
        default: 7 * DAY,
        minimum: 1,
        description: 'How long a finished job keeps its session directory (A-REX defaultttl)',
      }),
      maxSessionLifetimeSeconds: Type.Integer({
        default: 30 * DAY,
        minimum: 1,
        description: 'Upper bound on a job-requested lifetime',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
