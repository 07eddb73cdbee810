/**
 * The dry run of routing (`ceres admin route`, docs/routes.md): for a caller named by the
 * administrator and a job description file, what a submission would decide, deciding it
 * with the service's own code: the authorization groups and mapping (src/authz), the
 * acceptance checks with the default queue (src/jobs/description-port.ts) and the route
 * choice (src/jobs/routes.ts). Nothing is submitted and nothing is written: the mapping's
 * pool leases are taken in a throw-away database, so a pool account shown is the one a
 * first lease would get, not one the service holds.
 */
import type { Config } from '../config/schema.js';
import { openDatabase } from '../store/database.js';
import { Authorizer } from '../authz/authorizer.js';
import { parseFqanPattern, type Fqan } from '../auth/voms/fqan.js';
import type { AuthzSubject } from '../authz/subject.js';
import { descriptionPort } from '../jobs/description-port.js';
import { chooseRoute, jobRoute, routeFacts, type JobRoute } from '../jobs/routes.js';
import { isCeError } from '../errors/ce-error.js';

export interface DryRunCaller {
  /** Certificate subject DN, or (with token groups or scopes) the token's subject. */
  readonly subject: string;
  readonly issuer?: string | undefined;
  readonly fqans: readonly string[];
  /** Given: the caller is a bearer-token caller with these groups and scopes. */
  readonly tokenGroups?: readonly string[] | undefined;
  readonly tokenScopes?: readonly string[] | undefined;
}

export type DryRunResult =
  | {
      readonly ok: true;
      readonly route?: JobRoute;
      readonly queue: string;
      readonly groups: readonly string[];
      readonly localAccount?: string;
      /** Where the account comes from: the mapping, or `accounts.default` (a service running as root). */
      readonly accountFrom?: 'mapping' | 'default';
      readonly misses: readonly { readonly name: string; readonly why: string }[];
    }
  | {
      readonly ok: false;
      readonly step: 'authorization' | 'description' | 'route';
      readonly reason: string;
      readonly misses?: readonly { readonly name: string; readonly why: string }[];
    };

function subjectOf(c: DryRunCaller): AuthzSubject {
  if (c.tokenGroups !== undefined || c.tokenScopes !== undefined)
    return {
      kind: 'token',
      issuer: c.issuer ?? '',
      subject: c.subject,
      scopes: c.tokenScopes ?? [],
      groups: c.tokenGroups ?? [],
    };
  const parsedFqans = c.fqans.map(parseFqanPattern).filter((f): f is Fqan => typeof f !== 'string');
  return { kind: 'x509', dn: c.subject, issuerDn: c.issuer ?? '', fqans: c.fqans, parsedFqans };
}

/** What a submission of `description` by `caller` would be given; throws only on a broken configuration. */
export function dryRunRoute(config: Config, caller: DryRunCaller, description: Buffer): DryRunResult {
  let groups: readonly string[] = [];
  let localAccount: string | undefined;
  let queues: readonly string[] | undefined;
  if (config.authorization !== undefined) {
    const db = openDatabase(':memory:');
    try {
      const authz = new Authorizer(config.authorization, config.mapping, config.cluster.queues, db, {
        sharedAccounts: config.accounts.shared,
      });
      const g = authz.authorize(subjectOf(caller), caller.subject);
      groups = g.groups;
      localAccount = g.localAccount;
      queues = g.queues;
    } catch (e) {
      if (!isCeError(e)) throw e;
      return { ok: false, step: 'authorization', reason: e.message };
    } finally {
      db.close();
    }
  }
  // A service running as root maps every unmapped caller to the default account (start.ts).
  const accountFrom = localAccount !== undefined ? 'mapping' : 'default';
  localAccount ??= config.accounts.default;
  const port = descriptionPort(config);
  const { items } = port.split(description);
  const item = items[0];
  if (items.length !== 1 || item === undefined)
    return { ok: false, step: 'description', reason: `the file holds ${items.length} descriptions, not one` };
  if (!item.ok) return { ok: false, step: 'description', reason: item.reason };
  const acc = port.accept(item.description, {
    queue: undefined,
    delegationId: undefined,
    authorisedQueues: queues,
    callerGroups: groups,
  });
  if (!acc.ok) return { ok: false, step: 'description', reason: acc.reason };
  const desc = acc.description;
  const d = chooseRoute(
    config.routes,
    routeFacts(desc, {
      groups,
      fqans: caller.fqans,
      tokenGroups: caller.tokenGroups ?? [],
      tokenScopes: caller.tokenScopes ?? [],
    }),
  );
  const base = {
    queue: desc.queue ?? '',
    groups,
    misses: d.misses,
    localAccount,
    accountFrom,
  } as const;
  if (config.routes.length > 0 && d.route === undefined)
    return { ok: false, step: 'route', reason: 'no configured route takes this job', misses: d.misses };
  return { ok: true, ...base, ...(d.route !== undefined ? { route: jobRoute(d.route) } : {}) };
}
