import { Type } from '@sinclair/typebox';
import { ACCOUNT_NAME } from '../patterns.js';

/**
 * Which local accounts jobs may run as (docs/security.md, "Jobs under local accounts").
 * A grid user's code never runs as root: a root service without a `mapping` runs every
 * job as `accounts.default`; a mapped account below `accounts.minUid` (a system account)
 * is refused.
 */
export const accountsSection = {
  accounts: Type.Object(
    {
      default: Type.String({
        ...ACCOUNT_NAME,
        default: 'nobody',
        description:
          'The unprivileged local account every job runs as when the service runs as root and no `mapping` is configured. It is shared by every caller by design (so `accounts.shared` does not apply to it) and is exempt from `accounts.minUid`; it may never be uid 0. A service that is not root runs jobs as itself and ignores this key',
      }),
      minUid: Type.Integer({
        default: 1000,
        minimum: 1,
        description:
          'Lowest uid a mapped local account may have: an account of the mapping (fixed, pool or grid-mapfile) with a smaller uid is refused at start, by `ceres admin config check` and when a job would run as it (uid 0 is always refused). `accounts.default` is exempt',
      }),
      shared: Type.Array(Type.String({ ...ACCOUNT_NAME }), {
        default: [],
        description:
          "Fixed local accounts that more than one identity may be mapped to (a `mapping[].account` of a group that can match several callers, an account in two mapping entries, or on the lines of several DNs of a grid-mapfile). Identities that share an account are one Unix user: each can read what the others' jobs leave, their delegated credentials included. Without this declaration the start and `ceres admin config check` refuse such a mapping, and a grid-mapfile line that would share an undeclared account is skipped",
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
