import { Type } from '@sinclair/typebox';
import { ACCOUNT_NAME, FQAN_PREFIX, SHORT_NAME, VO_NAME } from '../patterns.js';
import { PATH } from '../paths.js';

/**
 * One match rule: exactly one of its keys (checked at load, src/config/authorization-check.ts).
 * One object with optional keys rather than a union, so a mistake gets a message
 * naming the key instead of "expected union value", and every key is documented.
 */
const rule = Type.Object(
  {
    all: Type.Optional(Type.Literal(true, { description: 'Matches every authenticated caller' })),
    subject: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'Exact subject DN of the end-entity certificate, one-line form (`/O=Site/CN=Jane Doe`)',
      }),
    ),
    subjectPattern: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'Glob over the whole subject DN: `*` any run of characters (slashes included), `?` one character, `\\` escapes the next; anchored at both ends',
      }),
    ),
    issuer: Type.Optional(
      Type.String({ minLength: 1, description: 'Exact subject DN of the CA that issued the end-entity certificate' }),
    ),
    gridMapFile: Type.Optional(
      Type.String({
        ...PATH,
        minLength: 1,
        description: 'Members: the DNs that have a valid line in this grid-mapfile (re-read when it changes)',
      }),
    ),
    voms: Type.Optional(
      Type.String({
        ...FQAN_PREFIX,
        description:
          'FQAN prefix, whole group names only: `/atlas` (the VO), `/atlas/prod` (a group and its subgroups), `/atlas/Role=production` (that role in the group or below); any verified FQAN of the caller may match',
      }),
    ),
    token: Type.Optional(
      Type.Object(
        {
          issuer: Type.String({ minLength: 1, description: 'Token issuer (`iss`), exact' }),
          subject: Type.Optional(Type.String({ minLength: 1, description: 'Token subject (`sub`), exact' })),
          scope: Type.Optional(
            Type.String({ minLength: 1, description: 'A scope the token must carry, e.g. `compute.create`' }),
          ),
          group: Type.Optional(
            Type.String({ minLength: 1, description: 'A group (`wlcg.groups` entry) the token must carry, exact' }),
          ),
        },
        {
          additionalProperties: false,
          description: 'Bearer-token claims (all given ones must hold); matches no certificate caller',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const group = Type.Object(
  {
    name: Type.String({
      ...SHORT_NAME,
      description: 'Group name, used by `authorization.allow`, `mapping[].group` and `cluster.queues[].allow`',
    }),
    match: Type.Array(rule, { minItems: 1, description: 'The caller is in the group when any rule matches' }),
  },
  { additionalProperties: false },
);

const mappingEntry = Type.Object(
  {
    group: Type.String({ minLength: 1, description: 'The entry applies to callers in this authorization group' }),
    gridMapFile: Type.Optional(
      Type.String({
        ...PATH,
        minLength: 1,
        description: "The account on the caller's line of this grid-mapfile (the first one of a comma list)",
      }),
    ),
    account: Type.Optional(
      Type.String({
        ...ACCOUNT_NAME,
        description: 'One fixed local account for every caller of the group',
      }),
    ),
    pool: Type.Optional(
      Type.Object(
        {
          accounts: Type.Array(Type.String({ ...ACCOUNT_NAME }), {
            minItems: 1,
            description: 'Pool accounts, leased one per DN (an account belongs to one pool only)',
          }),
          idleReleaseDays: Type.Number({
            default: 30,
            exclusiveMinimum: 0,
            description:
              'A lease is released after this long without a request from its DN and without a job of the account that still has a session directory',
          }),
        },
        {
          additionalProperties: false,
          description: 'Pool accounts, leased to DNs; leases are kept in the database across restarts',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const monitorEntry = Type.Object(
  {
    group: Type.String({ minLength: 1, description: 'The members of this authorization group monitor' }),
    vos: Type.Array(Type.String({ ...VO_NAME }), {
      minItems: 1,
      description: 'the jobs of these VOs (VO names, e.g. `atlas`)',
    }),
  },
  { additionalProperties: false },
);

/** Who may use the service, and as which local account (docs/security.md). */
export const authorizationSection = {
  authorization: Type.Optional(
    Type.Object(
      {
        groups: Type.Array(group, { minItems: 1, description: 'Authorization groups' }),
        allow: Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          description: 'Groups allowed to use the job interface; other callers get 403',
        }),
        monitors: Type.Optional(
          Type.Array(monitorEntry, {
            description:
              "The monitoring role: members of a group may list and follow (GET jobs?monitor=<vo>, the event stream and since= with monitor=<vo>, action=status|info) the jobs of the VOs named, whoever submitted them, and never act on them or read their files (403). A job's VO is that of its first FQAN (or token group). The group must also be allowed; absent: nobody monitors",
          }),
        ),
      },
      {
        additionalProperties: false,
        description: 'Without this section every caller with a certificate from a trusted CA is allowed',
      },
    ),
  ),
  mapping: Type.Array(mappingEntry, {
    default: [],
    description:
      'Local-account mapping, tried in order: the first entry whose group the caller is in and that yields an account wins; with entries, an allowed caller that none maps is refused (403). Each entry has exactly one of gridMapFile, account, pool',
  }),
};
