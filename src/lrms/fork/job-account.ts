/**
 * What the fork backend's wrapper needs to run a job as its local account
 * (BatchJobSpec.localAccount, docs/security.md): the CRED argument `UID:GID:G1,...` and
 * the account's names for the job environment. The switch itself happens in the C
 * wrapper's child right before the exec (../core/wrapper-c.ts); the service process never
 * changes its own identity.
 *
 * Refused here, so no job starts under the wrong identity: an account that does not
 * resolve or is root (CE_ERR_ACCOUNT_UNKNOWN/REFUSED), another account while the
 * service is not root, or the sh wrapper, which cannot switch safely
 * (CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE).
 */
import { ceError } from '../../errors/ce-error.js';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import type { WrapperKind } from '../core/wrapper-build.js';

export interface WrapperCredentials {
  /** The wrapper's CRED argument; '' = the job runs as the service's own user. */
  readonly cred: string;
  /** USER and LOGNAME of the account (none without one). */
  readonly env: Record<string, string>;
}

export async function wrapperCredentials(
  account: string | undefined,
  accounts: AccountResolver,
  wrapper: WrapperKind,
): Promise<WrapperCredentials> {
  if (account === undefined) return { cred: '', env: {} };
  const a = await accounts.resolve(account);
  const env = { USER: a.name, LOGNAME: a.name };
  const self = process.geteuid?.() ?? -1;
  if (self !== 0) {
    // Already that account: nothing to switch (groups stay the service's own).
    if (a.uid === self) return { cred: '', env };
    throw ceError(
      'CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE',
      `the service does not run as root and cannot run a job as local account ${a.name}`,
    );
  }
  if (wrapper !== 'c')
    throw ceError(
      'CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE',
      `the sh job wrapper cannot run a job as local account ${a.name}: install a C compiler (lrms.fork.compiler)`,
    );
  return { cred: `${a.uid}:${a.gid}:${a.groups.join(',')}`, env };
}
