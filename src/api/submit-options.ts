/**
 * What a submission takes from its caller, the same for the REST interface and the web's
 * submission form: one place, so a browser's job is admitted, mapped, limited and
 * accounted exactly as a client's (src/jobs/job-service.ts does the checks).
 */
import type { Caller } from '../http/caller.js';
import type { SubmitOptions } from '../jobs/job-service.js';

export type CallerSubmitOptions = Pick<
  SubmitOptions,
  'ownerDn' | 'localAccount' | 'fqans' | 'queues' | 'groups' | 'tokenGroups' | 'tokenScopes'
>;

export function callerSubmitOptions(caller: Caller): CallerSubmitOptions {
  return {
    ownerDn: caller.dn,
    localAccount: caller.localAccount,
    // A token's `wlcg.groups` are its VO attributes as a VOMS proxy's FQANs are (the
    // first names the VO): the job's accounting takes its VO and group from them.
    fqans: caller.fqans ?? (caller.token?.groups.length ? caller.token.groups : undefined),
    queues: caller.queues,
    groups: caller.groups,
    tokenGroups: caller.token?.groups,
    tokenScopes: caller.token?.scopes,
  };
}
