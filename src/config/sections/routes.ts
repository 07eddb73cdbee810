import { Type, type Static } from '@sinclair/typebox';
import { BATCH_NAME, FQAN_PREFIX, RTE_NAME, SHORT_NAME } from '../patterns.js';

const names = (worded: typeof SHORT_NAME, description: string) =>
  Type.Optional(Type.Array(Type.String({ ...worded }), { minItems: 1, description }));
const atMost = (description: string) => Type.Optional(Type.Integer({ minimum: 0, description }));

/**
 * What a route matches on: only what is known at submission. Every condition given must
 * hold; a list holds when any of its entries does; no condition: every job (a catch-all).
 */
const RouteMatch = Type.Object(
  {
    groups: names(SHORT_NAME, 'Authorization groups (authorization.groups); the caller is in one of them'),
    fqans: names(
      FQAN_PREFIX,
      'VOMS FQAN rules (/vo, /vo/group, /vo/Role=r), matched as the `voms` authorization rule; the caller holds one',
    ),
    tokenGroups: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: "Token groups (`wlcg.groups`); the caller's token carries one",
      }),
    ),
    tokenScopes: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: "Token scopes; the caller's token carries one",
      }),
    ),
    queues: names(SHORT_NAME, 'Ceres queues (cluster.queues); the job is for one of them'),
    runtimeEnvironments: names(RTE_NAME, 'Runtime environments; the job asks for one of them'),
    minSlots: atMost('The job asks for at least this many slots'),
    maxSlots: atMost('The job asks for at most this many slots'),
    maxMemoryBytes: atMost('The job asks for at most this much memory per slot (a job naming none matches)'),
    maxWallTimeSeconds: atMost('The job asks for at most this wall time (a job naming none does not match)'),
  },
  { additionalProperties: false, default: {} },
);

/**
 * One route: where matching jobs go in the batch system. Only the administrator's values
 * here reach the batch command line, never a value from a description or a caller.
 */
export const RouteSchema = Type.Object(
  {
    name: Type.String({ ...SHORT_NAME, description: 'Name of the route (stored with each job it takes)' }),
    match: RouteMatch,
    partition: Type.Optional(
      Type.String({ ...BATCH_NAME, description: "Batch partition; absent: the job's queue, as without routes" }),
    ),
    account: Type.Optional(Type.String({ ...BATCH_NAME, description: 'Batch account (Slurm `--account`)' })),
    qos: Type.Optional(Type.String({ ...BATCH_NAME, description: 'Batch QoS (Slurm `--qos`)' })),
    maxRunning: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Most jobs of this route in the batch system at once; the others wait in Ceres (PREPARED), saying so',
      }),
    ),
    maxRunningPerVo: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Most jobs of one VO (its first FQAN's) of this route in the batch system at once; the others wait, saying so",
      }),
    ),
    maxWaiting: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Most jobs of this route accepted and not yet in the batch system; past it a new job of the route is refused (item status 503, CE_ERR_JOB_ROUTE_FULL)',
      }),
    ),
    maxWaitingPerVo: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          "Most such waiting jobs of one VO (its first FQAN's) in this route; past it a new job of that VO is refused likewise",
      }),
    ),
    extraBatchArgs: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        description:
          'Options added to the batch submission of the jobs of this route (after lrms.slurm.extraSbatchArgs)',
      }),
    ),
  },
  { additionalProperties: false },
);

export type Route = Static<typeof RouteSchema>;

/**
 * `fairShare`: who takes a free slot of the batch system (engine.maxRunningJobs) among the
 * jobs waiting for one (src/engine/scheduler/share-chooser.ts).
 */
const FairShare = Type.Object(
  {
    by: Type.Union([Type.Literal('user'), Type.Literal('vo'), Type.Literal('route')], {
      default: 'user',
      description:
        "`user`: the users in turn (each user's jobs of one route and VO are one turn); `vo`: the VOs (of each job's first FQAN; '' for none) in proportion to `shares`; `route`: the routes likewise. Reloadable, the kind too: it applies to the next hand-over",
    }),
    shares: Type.Record(
      Type.String({ minLength: 0, maxLength: 255 }),
      Type.Integer({ minimum: 1, maximum: 1_000_000 }),
      {
        default: {},
        description:
          'Share of each VO or route name (per `by`); one not named has 1. With every key waiting, the jobs in the batch system are in these proportions',
      },
    ),
  },
  { additionalProperties: false, default: {} },
);

/** `routes`: the ordered list of routes (docs/routes.md); empty: no routing, as before. */
export const routesSection = {
  routes: Type.Array(RouteSchema, {
    default: [],
    description:
      'Ordered routes (docs/routes.md): the first whose match holds takes the job; when any are configured, a job matching none is refused with 403',
  }),
  fairShare: FairShare,
};
